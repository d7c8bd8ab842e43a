package io.quorumkv.service.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * Sends bytes exactly as given to a node on loopback and reads the answer: for requests
 * no well-behaved client would send (malformed escapes, raw control bytes, broken
 * chunking).
 */
public final class RawHttp {

	private RawHttp() {
	}

	/** The answer's status line, headers and body as text. */
	public record Answer(int status, String head, String body) {

	}

	public static Answer send(int port, String request) throws IOException {
		return send(port, request.getBytes(StandardCharsets.ISO_8859_1));
	}

	public static Answer send(int port, byte[] request) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(request);
			out.flush();
			socket.shutdownOutput();
			return parse(readAll(socket.getInputStream()));
		}
	}

	private static byte[] readAll(InputStream in) throws IOException {
		ByteArrayOutputStream buffer = new ByteArrayOutputStream();
		byte[] chunk = new byte[8192];
		try {
			for (int n; (n = in.read(chunk)) >= 0 && buffer.size() < (1 << 20);) {
				buffer.write(chunk, 0, n);
			}
		}
		catch (SocketTimeoutException ex) {
			// Keep-alive connection left open: what arrived is the answer.
		}
		return buffer.toByteArray();
	}

	private static Answer parse(byte[] raw) {
		String text = new String(raw, StandardCharsets.ISO_8859_1);
		if (!text.startsWith("HTTP/1.1 ")) {
			return new Answer(-1, text, "");
		}
		int status = Integer.parseInt(text.substring(9, 12));
		int split = text.indexOf("\r\n\r\n");
		return (split < 0) ? new Answer(status, text, "")
				: new Answer(status, text.substring(0, split), text.substring(split + 4));
	}

}
