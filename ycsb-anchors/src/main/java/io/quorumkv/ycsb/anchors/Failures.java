package io.quorumkv.ycsb.anchors;

import java.util.concurrent.atomic.AtomicInteger;

import site.ycsb.Status;

/** A binding's failed operation: printed for the first few, then only counted by YCSB. */
final class Failures {

	private static final int SHOWN = 10;

	private static final AtomicInteger COUNT = new AtomicInteger();

	private Failures() {
	}

	static Status failed(String store, String operation, Exception ex) {
		if (COUNT.incrementAndGet() <= SHOWN) {
			System.err.println(store + " " + operation + " failed: " + ex);
		}
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		return Status.ERROR;
	}

}
