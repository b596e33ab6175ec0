"""``python -m theorylab.config ARGS``: the command ``theorylab config ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.config``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("config")
