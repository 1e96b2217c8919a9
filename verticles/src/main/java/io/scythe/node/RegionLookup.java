package io.scythe.node;

/** Asks a memory node where its region {@code region} is ({@value #ALL} for every region). */
public record RegionLookup(String region) {
    public static final String ALL = "*";
}
