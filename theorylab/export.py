"""``python -m theorylab.export ARGS``: the command ``theorylab export ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.export``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("export")
