"""Jinja2 templates and CSS of the factsheet (package data: installed as `factsheet.templates`)."""
