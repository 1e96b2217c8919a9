/**
 * The {@code shm} provider: memory nodes, compute nodes and TSO nodes in separate processes of one host, their
 * registered memory shared as files in {@code /dev/shm}. A node's control file ({@link io.scythe.fabric.shm.ShmLayout})
 * holds its NIC timing state, region table, fenced nodes and one slot per incoming queue pair; every process that
 * talks to the node maps it. Verbs run the emulated engine: the requester's process executes one-sided verbs as CPU
 * atomics and copies on the mapped region (the memory node's CPU never runs), at the cost model's times. Revocation
 * is a slot state the requester reads on every verb; a connect publishes its slot and then re-checks the fence table,
 * a fence records and then revokes published slots, so neither can miss the other ({@code ShmNic}). A dead owner is
 * noticed from its PID within 10 ms. SEND and RECV go through single-producer rings in the slot, into receive buffers
 * that must be registered memory.
 */
package io.scythe.fabric.shm;
