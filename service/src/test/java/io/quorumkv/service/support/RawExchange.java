package io.quorumkv.service.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * One raw request on its own loopback connection, bounded in time: the answer is read
 * until it is complete (by {@code Content-Length} or the last chunk) or the server closes
 * the connection, never longer than the limit. For fuzzing: whatever bytes are sent, the
 * test learns whether the server answered, closed, or left the connection hanging.
 *
 * @param status the status code, -1 when no status line arrived
 * @param closed whether the server closed the connection (or reset it)
 * @param hung whether the limit passed with neither a full answer nor a close
 * @param millis time until the answer was complete, the close, or the limit
 * @param head status line and headers
 * @param body the body as ISO-8859-1 text (as far as read)
 */
public record RawExchange(int status, boolean closed, boolean hung, long millis, String head, String body) {

	/**
	 * Sends {@code request}; with {@code halfClose} the sending side is shut down after
	 * it (end of input for the server).
	 */
	public static RawExchange send(int port, byte[] request, boolean halfClose, Duration limit) {
		long start = System.nanoTime();
		long deadline = start + limit.toNanos();
		ByteArrayOutputStream received = new ByteArrayOutputStream();
		boolean closed = false;
		boolean complete = false;
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
			try {
				socket.getOutputStream().write(request);
				socket.getOutputStream().flush();
				if (halfClose) {
					socket.shutdownOutput();
				}
			}
			catch (IOException ex) {
				// the server may close before reading everything (e.g. after a 413)
			}
			InputStream in = socket.getInputStream();
			byte[] chunk = new byte[8192];
			while (!complete) {
				long left = (deadline - System.nanoTime()) / 1_000_000;
				if (left <= 0) {
					break;
				}
				socket.setSoTimeout((int) Math.max(1, left));
				int n;
				try {
					n = in.read(chunk);
				}
				catch (SocketTimeoutException ex) {
					break;
				}
				catch (IOException ex) {
					closed = true;
					break;
				}
				if (n < 0) {
					closed = true;
					break;
				}
				received.write(chunk, 0, Math.min(n, Math.max(0, (1 << 20) - received.size())));
				complete = complete(received.toByteArray());
			}
		}
		catch (IOException ex) {
			closed = true;
		}
		long millis = (System.nanoTime() - start) / 1_000_000;
		String text = received.toString(StandardCharsets.ISO_8859_1);
		int split = text.indexOf("\r\n\r\n");
		String head = (split < 0) ? text : text.substring(0, split);
		String body = (split < 0) ? "" : text.substring(split + 4);
		int status = (text.startsWith("HTTP/1.1 ") && text.length() >= 12) ? Integer.parseInt(text.substring(9, 12))
				: -1;
		return new RawExchange(status, closed, !complete && !closed, millis, head, body);
	}

	private static boolean complete(byte[] raw) {
		String text = new String(raw, StandardCharsets.ISO_8859_1);
		int split = text.indexOf("\r\n\r\n");
		if (split < 0) {
			return false;
		}
		String head = text.substring(0, split).toLowerCase(Locale.ROOT);
		int bodyLength = text.length() - split - 4;
		int length = head.indexOf("\r\ncontent-length:");
		if (length >= 0) {
			int end = head.indexOf("\r\n", length + 2);
			String value = head.substring(length + 17, (end < 0) ? head.length() : end).trim();
			return bodyLength >= Integer.parseInt(value);
		}
		if (head.contains("\r\ntransfer-encoding: chunked")) {
			return text.endsWith("\r\n0\r\n\r\n") || text.substring(split + 4).startsWith("0\r\n\r\n");
		}
		// no body framing: a status without a body (204, 304) or until close
		return head.startsWith("http/1.1 204") || head.startsWith("http/1.1 304");
	}

}
