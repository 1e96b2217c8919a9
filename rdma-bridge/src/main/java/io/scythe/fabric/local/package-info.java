/**
 * The {@code local} provider: every node's virtual NIC in one JVM (embedded clusters, tests, the simulator).
 * Regions are direct buffers (freed by the garbage collector, so a verb racing with deregistration never touches
 * freed memory); queue pairs connect NICs of the same {@link io.scythe.fabric.local.LocalFabric}.
 */
package io.scythe.fabric.local;
