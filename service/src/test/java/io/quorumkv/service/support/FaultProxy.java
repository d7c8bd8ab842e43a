package io.quorumkv.service.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongToIntFunction;
import java.util.stream.Stream;

/**
 * A fault-injecting TCP proxy on loopback in front of one node: peers reach the node
 * through it. It forwards bytes both ways, and on demand
 * <ul>
 * <li>adds latency to what goes to the node ({@link #delay}),</li>
 * <li>blackholes connections ({@link #isolate}: bytes are read and dropped, never
 * answered, like packets lost in a partition), either all of them or those opened by
 * given nodes ({@link #block}); the opening node is found through {@code /proc} (the
 * connection's socket inode and the file descriptors of the node processes), so that
 * proxies cut node pairs, not all traffic.</li>
 * </ul>
 * It counts connections (open, most at once) and requests forwarded. Virtual threads, one
 * reader and one writer per direction of a connection.
 */
public final class FaultProxy implements AutoCloseable {

	private final int target;

	private final ServerSocket server;

	private final LongToIntFunction nodeOfPid;

	private final Set<Connection> connections = ConcurrentHashMap.newKeySet();

	private final Set<Integer> blockedSources = ConcurrentHashMap.newKeySet();

	private volatile boolean isolated;

	private volatile long delayMillis;

	private volatile boolean closed;

	private final AtomicInteger open = new AtomicInteger();

	private final AtomicInteger maxOpen = new AtomicInteger();

	private final AtomicLong requests = new AtomicLong();

	private final AtomicLong accepted = new AtomicLong();

	/**
	 * @param target the node's port
	 * @param nodeOfPid the node index of a process id, -1 for other processes
	 */
	public FaultProxy(int target, LongToIntFunction nodeOfPid) {
		this.target = target;
		this.nodeOfPid = nodeOfPid;
		try {
			this.server = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		Thread.ofVirtual().name("proxy-accept-" + this.server.getLocalPort()).start(this::acceptLoop);
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/** Adds this latency to every chunk sent to the node (0 to stop). */
	public void delay(long millis) {
		this.delayMillis = millis;
	}

	/** Blackholes every connection, open ones included. */
	public void isolate() {
		this.isolated = true;
	}

	/** Blackholes the connections opened by this node, open ones included. */
	public void block(int sourceNode) {
		this.blockedSources.add(sourceNode);
	}

	/** Forwards everything again; connections that lost bytes are closed. */
	public void heal() {
		this.isolated = false;
		this.blockedSources.clear();
		for (Connection connection : this.connections) {
			if (connection.dropped) {
				connection.close();
			}
		}
	}

	public int openConnections() {
		return this.open.get();
	}

	public int maxOpenConnections() {
		return this.maxOpen.get();
	}

	public void resetMaxOpenConnections() {
		this.maxOpen.set(this.open.get());
	}

	/** Chunks forwarded to the node that start an HTTP request. */
	public long requestsForwarded() {
		return this.requests.get();
	}

	public long connectionsAccepted() {
		return this.accepted.get();
	}

	private void acceptLoop() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				this.accepted.incrementAndGet();
				int source = sourceNode(client);
				Thread.ofVirtual().start(() -> serve(client, source));
			}
			catch (IOException ex) {
				if (!this.closed) {
					sleep(10);
				}
			}
		}
	}

	private void serve(Socket client, int source) {
		Socket upstream = new Socket();
		Connection connection = new Connection(client, upstream, source);
		this.connections.add(connection);
		int now = this.open.incrementAndGet();
		this.maxOpen.accumulateAndGet(now, Math::max);
		try {
			client.setTcpNoDelay(true);
			upstream.setTcpNoDelay(true);
			upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.target), 1_000);
			Thread back = Thread.ofVirtual().start(() -> pump(connection, upstream, client, false));
			pump(connection, client, upstream, true);
			back.join(60_000);
		}
		catch (IOException ex) {
			// target down: the client sees the connection closed
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			connection.close();
			this.connections.remove(connection);
			clientGone(connection);
		}
	}

	/**
	 * Counts a connection open while its client keeps it (what a caller has in flight).
	 */
	private void clientGone(Connection connection) {
		if (connection.clientOpen.compareAndSet(true, false)) {
			this.open.decrementAndGet();
		}
	}

	/**
	 * Copies one direction; towards the node, chunks are queued with their arrival time
	 * and written once their delay is over.
	 */
	private void pump(Connection connection, Socket from, Socket to, boolean towardsNode) {
		LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
		Thread writer = Thread.ofVirtual().start(() -> {
			try {
				OutputStream out = to.getOutputStream();
				while (true) {
					Chunk chunk = queue.take();
					if (chunk.bytes == null) {
						break;
					}
					long wait = chunk.due - System.currentTimeMillis();
					if (wait > 0) {
						Thread.sleep(wait);
					}
					out.write(chunk.bytes);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// connection gone
			}
			connection.close();
		});
		try {
			InputStream in = from.getInputStream();
			byte[] buffer = new byte[16_384];
			for (int n; (n = in.read(buffer)) >= 0;) {
				if (blocked(connection)) {
					connection.dropped = true;
					continue;
				}
				byte[] bytes = java.util.Arrays.copyOf(buffer, n);
				long delay = towardsNode ? this.delayMillis : 0;
				if (towardsNode && startsRequest(bytes)) {
					this.requests.incrementAndGet();
				}
				queue.add(new Chunk(bytes, System.currentTimeMillis() + delay));
			}
		}
		catch (IOException ex) {
			// closed
		}
		if (towardsNode) {
			clientGone(connection);
		}
		queue.add(new Chunk(null, 0));
		try {
			writer.join(30_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		connection.close();
	}

	private boolean blocked(Connection connection) {
		return this.isolated || (connection.source >= 0 && this.blockedSources.contains(connection.source));
	}

	private static boolean startsRequest(byte[] bytes) {
		return bytes.length > 4 && ((bytes[0] == 'P' && bytes[1] == 'U' && bytes[2] == 'T')
				|| (bytes[0] == 'G' && bytes[1] == 'E' && bytes[2] == 'T'));
	}

	/** The node that opened the connection, found through /proc; -1 if unknown. */
	private int sourceNode(Socket client) {
		try {
			long inode = inodeOf(client.getPort(), client.getLocalPort());
			if (inode <= 0) {
				return -1;
			}
			String link = "socket:[" + inode + "]";
			try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
				for (Path process : processes
					.filter((p) -> p.getFileName().toString().chars().allMatch(Character::isDigit))
					.toList()) {
					long pid = Long.parseLong(process.getFileName().toString());
					int node = this.nodeOfPid.applyAsInt(pid);
					if (node >= 0 && ownsSocket(process, link)) {
						return node;
					}
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// not Linux or not visible: unknown source
		}
		return -1;
	}

	private static boolean ownsSocket(Path process, String link) {
		try (Stream<Path> fds = Files.list(process.resolve("fd"))) {
			return fds.anyMatch((fd) -> {
				try {
					return Files.readSymbolicLink(fd).toString().equals(link);
				}
				catch (IOException ex) {
					return false;
				}
			});
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * The inode of the socket whose local port is {@code local} and remote
	 * {@code remote}.
	 */
	private static long inodeOf(int local, int remote) throws IOException {
		for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
			Path path = Path.of(table);
			if (!Files.isReadable(path)) {
				continue;
			}
			for (String line : Files.readAllLines(path)) {
				String[] fields = line.trim().split("\\s+");
				if (fields.length < 10 || !fields[1].contains(":")) {
					continue;
				}
				int localPort = Integer.parseInt(fields[1].substring(fields[1].lastIndexOf(':') + 1), 16);
				int remotePort = Integer.parseInt(fields[2].substring(fields[2].lastIndexOf(':') + 1), 16);
				if (localPort == local && remotePort == remote) {
					return Long.parseLong(fields[9]);
				}
			}
		}
		return -1;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.closed = true;
		try {
			this.server.close();
		}
		catch (IOException ignored) {
			// best effort
		}
		for (Connection connection : this.connections) {
			connection.close();
		}
	}

	private record Chunk(byte[] bytes, long due) {

	}

	private static final class Connection {

		final Socket client;

		final Socket upstream;

		final int source;

		volatile boolean dropped;

		final java.util.concurrent.atomic.AtomicBoolean clientOpen = new java.util.concurrent.atomic.AtomicBoolean(
				true);

		Connection(Socket client, Socket upstream, int source) {
			this.client = client;
			this.upstream = upstream;
			this.source = source;
		}

		void close() {
			try {
				this.client.close();
			}
			catch (IOException ignored) {
				// best effort
			}
			try {
				this.upstream.close();
			}
			catch (IOException ignored) {
				// best effort
			}
		}

	}

}
