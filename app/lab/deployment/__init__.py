"""Deployments: settings, their config.pbtxt, loading them within the class's budget, presets."""
