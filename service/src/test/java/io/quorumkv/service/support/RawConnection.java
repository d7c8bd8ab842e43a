package io.quorumkv.service.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * One loopback connection to a node that stays open across requests: bytes are sent
 * exactly as given, and answers are read one at a time, each bounded in time. For
 * keep-alive and pipelining tests, where {@link RawHttp} and {@link RawExchange} (one
 * request per connection) cannot tell which request an answer belongs to.
 */
public final class RawConnection implements AutoCloseable {

	private final Socket socket;

	private final InputStream in;

	private final OutputStream out;

	/** Bytes received and not yet returned as part of an answer. */
	private byte[] pending = new byte[0];

	private boolean closedByServer;

	/**
	 * One answer.
	 *
	 * @param status the status code
	 * @param head status line and headers
	 * @param body the body (de-chunked) as ISO-8859-1 text
	 */
	public record Answer(int status, String head, String body) {

		/** Whether the server announced it closes the connection after this answer. */
		public boolean closes() {
			return head.toLowerCase(Locale.ROOT).contains("\r\nconnection: close");
		}

	}

	private RawConnection(Socket socket) throws IOException {
		this.socket = socket;
		this.in = socket.getInputStream();
		this.out = socket.getOutputStream();
	}

	public static RawConnection open(int port) throws IOException {
		Socket socket = new Socket();
		try {
			socket.setTcpNoDelay(true);
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
			return new RawConnection(socket);
		}
		catch (IOException ex) {
			socket.close();
			throw ex;
		}
	}

	/** Sends {@code text} as ISO-8859-1 bytes, at once. */
	public RawConnection send(String text) throws IOException {
		return send(text.getBytes(StandardCharsets.ISO_8859_1));
	}

	public RawConnection send(byte[] bytes) throws IOException {
		this.out.write(bytes);
		this.out.flush();
		return this;
	}

	/**
	 * The next whole answer, or {@code null} when none was complete within {@code limit}
	 * or the server closed the connection first (see {@link #closedByServer()}).
	 */
	public @Nullable Answer read(Duration limit) throws IOException {
		long deadline = System.nanoTime() + limit.toNanos();
		while (true) {
			Answer answer = parse();
			if (answer != null) {
				return answer;
			}
			if (this.closedByServer) {
				return null;
			}
			long left = (deadline - System.nanoTime()) / 1_000_000;
			if (left <= 0) {
				return null;
			}
			this.socket.setSoTimeout((int) Math.max(1, left));
			byte[] chunk = new byte[8192];
			int n;
			try {
				n = this.in.read(chunk);
			}
			catch (SocketTimeoutException ex) {
				return null;
			}
			catch (IOException ex) {
				// reset by the server
				this.closedByServer = true;
				continue;
			}
			if (n < 0) {
				this.closedByServer = true;
				continue;
			}
			byte[] joined = Arrays.copyOf(this.pending, this.pending.length + n);
			System.arraycopy(chunk, 0, joined, this.pending.length, n);
			this.pending = joined;
		}
	}

	/**
	 * Whether the server closed (or reset) the connection; known only once a
	 * {@link #read} saw it.
	 */
	public boolean closedByServer() {
		return this.closedByServer;
	}

	/** Parses one whole answer off {@link #pending}, or returns null if incomplete. */
	private @Nullable Answer parse() {
		String text = new String(this.pending, StandardCharsets.ISO_8859_1);
		int split = text.indexOf("\r\n\r\n");
		if (split < 0) {
			return null;
		}
		String head = text.substring(0, split);
		if (!head.startsWith("HTTP/1.1 ") || head.length() < 12) {
			throw new IllegalStateException("not an HTTP/1.1 answer: " + head);
		}
		int status = Integer.parseInt(head.substring(9, 12));
		String lower = head.toLowerCase(Locale.ROOT);
		int bodyStart = split + 4;
		String body;
		int end;
		String length = header(lower, "content-length");
		if (status / 100 == 1 || status == 204 || status == 304) {
			body = "";
			end = bodyStart;
		}
		else if (length != null) {
			end = bodyStart + Integer.parseInt(length);
			if (text.length() < end) {
				return null;
			}
			body = text.substring(bodyStart, end);
		}
		else if ("chunked".equals(header(lower, "transfer-encoding"))) {
			StringBuilder chunks = new StringBuilder();
			int at = bodyStart;
			while (true) {
				int lineEnd = text.indexOf("\r\n", at);
				if (lineEnd < 0) {
					return null;
				}
				int size = Integer.parseInt(text.substring(at, lineEnd).trim(), 16);
				int next = lineEnd + 2 + size + 2;
				if (text.length() < next) {
					return null;
				}
				if (size == 0) {
					end = next;
					break;
				}
				chunks.append(text, lineEnd + 2, lineEnd + 2 + size);
				at = next;
			}
			body = chunks.toString();
		}
		else {
			// delimited by the close
			if (!this.closedByServer) {
				return null;
			}
			end = text.length();
			body = text.substring(bodyStart);
		}
		this.pending = Arrays.copyOfRange(this.pending, end, this.pending.length);
		return new Answer(status, head, body);
	}

	private static @Nullable String header(String lowerHead, String name) {
		int at = lowerHead.indexOf("\r\n" + name + ":");
		if (at < 0) {
			return null;
		}
		int end = lowerHead.indexOf("\r\n", at + 2);
		return lowerHead.substring(at + name.length() + 3, (end < 0) ? lowerHead.length() : end).trim();
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
