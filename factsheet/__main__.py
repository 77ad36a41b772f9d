"""`python -m factsheet` and the `factsheet` console script. The stop signals are handled before the
commands are imported (several seconds on a busy host), so a SIGTERM or Ctrl-C at start-up also exits
143 or 130 without a traceback."""

from factsheet.cli import signals


def run() -> None:
    signals.install()
    try:
        # deferred: the commands load typer, rich and the probes (~1 s); the stop signals come first
        from factsheet.cli.commands import main
    except KeyboardInterrupt as exc:
        signals.finish(signals.exit_code(exc))
    except BaseException:
        # The signal's KeyboardInterrupt may surface wrapped (raised inside a class body's __set_name__, it
        # becomes a RuntimeError): a stop during the imports is a stop, never a traceback.
        if signals.stopped_code() is None:
            raise
        signals.finish(signals.stopped_code())
    main()


if __name__ == "__main__":
    run()
