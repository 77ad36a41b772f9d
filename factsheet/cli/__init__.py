"""The command line: every command module, the progress bars and the stop signals. The only room that
imports typer and rich; a command turns flags into one `factsheet.api` call. Kept empty so that
`factsheet.cli.signals` loads without the commands (see factsheet.__main__)."""
