/**
 * Heat detection and policy for Scythe's hot-aware concurrency control (Scythe §4.2-4.3): the queue length a Takeout
 * Lock reports is the heat of its object ({@link io.scythe.hotspot.Watermarks} decide cold or hot, and when to refuse);
 * {@link io.scythe.hotspot.Srtt} keeps the smoothed round-trip time per memory node that the hangout timeout
 * (Eq. 3) multiplies; {@link io.scythe.hotspot.AdaptiveWatermarks} moves the cold watermark per object from observed
 * aborts (the paper's future work, behind a setting). Pure state, no I/O: used from one event loop.
 */
package io.scythe.hotspot;
