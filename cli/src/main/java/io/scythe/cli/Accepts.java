package io.scythe.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What a command-line option accepts, checked by {@link OptionChecks} for every command before it runs: a value out of
 * range, a name not among the known ones or an input file that does not exist gets one line naming the option and what
 * it accepts, and exit code 2. Every option that takes a value carries one (a test walks the picocli model), so a new
 * option states its range where it is declared. For a list option each element is checked.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
@interface Accepts {
    /** Smallest value, written as on the command line (numbers and durations); empty: no lower bound. */
    String min() default "";

    /** Largest value, as {@link #min}; empty: no upper bound. */
    String max() default "";

    /** The names the option accepts (case-insensitive); {@link Any}: any text. */
    Class<? extends Iterable<String>> names() default Any.class;

    /** The value is an input file or directory that must exist. */
    boolean exists() default false;

    /** What the option accepts, in words, when it is free (a seed, a directory to write, JVM options). */
    String value() default "";

    /** No list of names: any text (checked where it is used, or free). */
    final class Any implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return java.util.Collections.emptyIterator();
        }
    }
}
