"""``python -m theorylab.check ARGS``: the command ``theorylab check ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.check``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("check")
