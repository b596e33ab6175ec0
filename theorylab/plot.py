"""``python -m theorylab.plot ARGS``: the command ``theorylab plot ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.plot``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("plot")
