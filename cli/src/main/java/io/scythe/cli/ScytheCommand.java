package io.scythe.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code scythe} command: one runnable jar for benchmarks, nodes and tools. */
@Command(name = "scythe", mixinStandardHelpOptions = true, versionProvider = ScytheCommand.Version.class,
    description = "Scythe: distributed transactions for disaggregated memory, on Eclipse Vert.x.",
    subcommands = {BenchCommand.class, SimCommand.class, CheckCommand.class, ReportCommand.class, ReproduceCommand.class,
        FabricCommand.class, NodeCommand.class, ClusterCommand.class, ChaosCommand.class, FuzzCommand.class,
        CommandLine.HelpCommand.class})
public final class ScytheCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(final String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The configured command line (also used by tests). */
    public static CommandLine commandLine() {
        return new CommandLine(new ScytheCommand())
            .registerConverter(java.time.Duration.class, text -> {
                try {
                    return Durations.parse(text);
                } catch (final IllegalArgumentException e) {
                    throw new CommandLine.TypeConversionException(e.getMessage()); // no Java class name in the line
                }
            })
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setExecutionStrategy(new OptionChecks()) // every option's @Accepts, before any command runs
            .setParameterExceptionHandler(ScytheCommand::refuse)
            .setExecutionExceptionHandler(ScytheCommand::handle);
    }

    /**
     * A malformed command line (an unknown option, a value that does not convert, a missing value): one line naming
     * the option and what it accepts, and exit code 2; no usage dump (there is --help for that).
     */
    private static int refuse(final CommandLine.ParameterException error, final String[] args) {
        final CommandLine command = error.getCommandLine();
        String line = error.getMessage();
        if (error instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
            line += " (did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?)";
        }
        command.getErr().println("scythe " + command.getCommandName() + ": " + line.replace('\n', ' ').strip()
            + "; see 'scythe " + command.getCommandName() + " --help'");
        return 2;
    }

    /** Bad input gets one clear line and exit code 2; anything else is a bug and keeps its stack trace. */
    private static int handle(final Exception error, final CommandLine command,
                              final CommandLine.ParseResult parseResult) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException || t instanceof io.scythe.fabric.FabricException
                || t instanceof io.scythe.txn.UnknownKeyException) {
                command.getErr().println("scythe " + command.getCommandName() + ": " + t.getMessage());
                return 2;
            }
        }
        error.printStackTrace(command.getErr());
        return 1;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            final String version = ScytheCommand.class.getPackage().getImplementationVersion();
            return new String[] {"scythe " + (version == null ? "development build" : version),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"};
        }
    }
}
