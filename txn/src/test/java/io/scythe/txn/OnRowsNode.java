package io.scythe.txn;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A test class's fixture: a fresh memory node with a table {@link #T} of 64 objects for each test, closed after it. */
public abstract class OnRowsNode {
    protected static final String T = "rows";
    protected OneMemoryNode node;

    @BeforeEach
    void setUpRowsNode() throws Exception {
        node = new OneMemoryNode(T, 64);
    }

    @AfterEach
    void tearDownRowsNode() throws Exception {
        node.close();
    }
}
