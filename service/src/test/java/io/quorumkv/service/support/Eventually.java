package io.quorumkv.service.support;

import java.time.Duration;

/**
 * Retries an assertion until it holds or the time is up (then throws its last failure).
 */
public final class Eventually {

	private Eventually() {
	}

	public static void eventually(Duration limit, Runnable assertion) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (true) {
			try {
				assertion.run();
				return;
			}
			catch (AssertionError | RuntimeException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
