"""Published JSON Schemas, one folder per major version (package data: `factsheet.published_schemas`)."""
