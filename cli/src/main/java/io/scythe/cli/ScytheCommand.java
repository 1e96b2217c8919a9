package io.scythe.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code scythe} command: one runnable jar for benchmarks, nodes and tools. */
@Command(name = "scythe", mixinStandardHelpOptions = true, versionProvider = ScytheCommand.Version.class,
    description = "Scythe: distributed transactions for disaggregated memory, on Eclipse Vert.x.",
    subcommands = {BenchCommand.class, SimCommand.class, CheckCommand.class, ReportCommand.class,
        FabricCommand.class, NodeCommand.class, ClusterCommand.class, ChaosCommand.class, CommandLine.HelpCommand.class})
public final class ScytheCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(final String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The configured command line (also used by tests). */
    public static CommandLine commandLine() {
        return new CommandLine(new ScytheCommand())
            .registerConverter(java.time.Duration.class, Durations::parse)
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setExecutionExceptionHandler(ScytheCommand::handle);
    }

    /** Bad input gets one clear line and exit code 2; anything else is a bug and keeps its stack trace. */
    private static int handle(final Exception error, final CommandLine command,
                              final CommandLine.ParseResult parseResult) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException || t instanceof io.scythe.fabric.FabricException) {
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
