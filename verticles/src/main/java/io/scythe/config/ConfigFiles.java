package io.scythe.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Reads configuration files (YAML or JSON, by extension) with vertx-config. */
public final class ConfigFiles {
    private ConfigFiles() {
    }

    /** Reads {@code file}; fails with a message naming the file when it is missing or malformed. */
    public static Future<JsonObject> read(final Vertx vertx, final Path file) {
        if (!Files.isRegularFile(file)) {
            return Future.failedFuture(new IllegalArgumentException("configuration file " + file + " not found"));
        }
        final String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        final String format = name.endsWith(".yaml") || name.endsWith(".yml") ? "yaml" : "json";
        final ConfigRetriever retriever = ConfigRetriever.create(vertx, new ConfigRetrieverOptions()
            .setIncludeDefaultStores(false)
            .addStore(new ConfigStoreOptions().setType("file").setFormat(format)
                .setConfig(new JsonObject().put("path", file.toAbsolutePath().toString()))));
        return retriever.getConfig()
            .recover(e -> Future.failedFuture(new IllegalArgumentException("cannot read " + format
                + " configuration " + file + ": " + e.getMessage(), e)))
            .eventually(retriever::close);
    }
}
