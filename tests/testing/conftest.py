"""The plugin tests run inner pytest sessions (pytester)."""

pytest_plugins = ["pytester"]
