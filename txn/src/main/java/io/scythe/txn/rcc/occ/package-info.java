/** RCC's OCC, DrTM+H's (RCC §4.1, §6): {@link io.scythe.txn.rcc.occ.OccTxn}. */
package io.scythe.txn.rcc.occ;
