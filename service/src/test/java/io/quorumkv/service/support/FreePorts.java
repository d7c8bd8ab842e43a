package io.quorumkv.service.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports, taken together so that they differ. They come from a band of their
 * own per test JVM ({@code quorumkv.test.fork}, surefire's fork number), below the
 * kernel's ephemeral range (32768 and up on Linux): a port taken here and bound by a node
 * a moment later is never handed meanwhile to an outgoing connection or to a test in
 * another fork.
 */
public final class FreePorts {

	private static final int FIRST_BAND = 10_000;

	private static final int BAND = 5_000;

	private static final int BANDS = 4;

	private static final int TRIES = 200;

	private FreePorts() {
	}

	public static int[] take(int count) {
		int fork = fork();
		int low = FIRST_BAND + Math.floorMod(fork - 1, BANDS) * BAND;
		List<ServerSocket> sockets = new ArrayList<>();
		try {
			int[] ports = new int[count];
			for (int i = 0; i < count; i++) {
				ServerSocket socket = bindOne(low);
				sockets.add(socket);
				ports[i] = socket.getLocalPort();
			}
			return ports;
		}
		finally {
			for (ServerSocket socket : sockets) {
				try {
					socket.close();
				}
				catch (IOException ignored) {
					// best effort
				}
			}
		}
	}

	/** Surefire's fork number (1, 2, ...), 1 in a JVM that surefire did not start. */
	static int fork() {
		String fork = System.getProperty("quorumkv.test.fork");
		if (fork == null) {
			return 1;
		}
		try {
			return Integer.parseInt(fork);
		}
		catch (NumberFormatException ex) {
			throw new IllegalStateException("quorumkv.test.fork is not a number: " + fork, ex);
		}
	}

	private static ServerSocket bindOne(int low) {
		for (int i = 0; i < TRIES; i++) {
			int port = low + ThreadLocalRandom.current().nextInt(BAND);
			try {
				return new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
			}
			catch (IOException taken) {
				// in use: another one
			}
		}
		throw new IllegalStateException(
				"no free port in [" + low + ", " + (low + BAND) + ") after " + TRIES + " tries");
	}

}
