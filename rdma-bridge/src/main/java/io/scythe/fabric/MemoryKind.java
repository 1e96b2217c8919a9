package io.scythe.fabric;

/**
 * Where a registered region lives on its node. The cost model charges atomics differently: an atomic on host memory
 * needs two PCIe transactions (read into the NIC, write back), one on NIC device memory needs none (Scythe §3.3,
 * §4.5 (1): ~110 Mops).
 */
public enum MemoryKind {
    /** Host DRAM behind PCIe: the default for data. */
    HOST,
    /** The NIC's on-chip device memory (ConnectX-5: 256 KB): small, and fast for atomics. */
    DEVICE
}
