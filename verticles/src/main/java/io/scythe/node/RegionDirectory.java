package io.scythe.node;

import io.scythe.fabric.RemoteRegion;

import java.util.List;

/** A memory node's answer to a {@link RegionLookup}: the regions peers address with one-sided verbs. */
public record RegionDirectory(String node, List<RemoteRegion> regions) {
}
