"""Thin function views: validate input, call a selector or a service, render."""
