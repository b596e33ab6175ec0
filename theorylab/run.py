"""``python -m theorylab.run ARGS``: the command ``theorylab run ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.run``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("run")
