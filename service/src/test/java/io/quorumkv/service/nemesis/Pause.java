package io.quorumkv.service.nemesis;

/** Sleeps that give up quietly when interrupted (the interrupt flag stays set). */
final class Pause {

	private Pause() {
	}

	static void millis(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
