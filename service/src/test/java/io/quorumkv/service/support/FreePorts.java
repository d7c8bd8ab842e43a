package io.quorumkv.service.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Free loopback ports, taken together so that they differ. */
public final class FreePorts {

	private FreePorts() {
	}

	public static int[] take(int count) {
		List<ServerSocket> sockets = new ArrayList<>();
		try {
			int[] ports = new int[count];
			for (int i = 0; i < count; i++) {
				ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
				sockets.add(socket);
				ports[i] = socket.getLocalPort();
			}
			return ports;
		}
		catch (IOException ex) {
			throw new IllegalStateException("no free port", ex);
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

}
