package io.quorumkv.service.nemesis;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Every invocation and completion of the clients' operations, with monotonic times, and
 * the fault windows of the nemesis. Each event is also appended as a line to a log file
 * (kept with a failing run's folder), so that a run can be read after the fact.
 */
final class History implements AutoCloseable {

	/** A fault's window: from its start to its end (both monotonic). */
	record Window(String fault, long start, long end) {

	}

	/** An operation under way: the invocation, completed by {@link History#complete}. */
	record Invocation(long id, int client, Op.Kind kind, String key, @Nullable String value, int ack, int from,
			int node, long invoked) {

	}

	private final AtomicLong ids = new AtomicLong();

	private final List<Op> ops = new ArrayList<>();

	private final List<Window> windows = new ArrayList<>();

	private final @Nullable BufferedWriter log;

	History(@Nullable Path logFile) {
		try {
			this.log = (logFile != null) ? Files.newBufferedWriter(logFile, StandardCharsets.UTF_8) : null;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	Invocation invoke(int client, Op.Kind kind, String key, @Nullable String value, int ack, int from, int node) {
		Invocation invocation = new Invocation(this.ids.getAndIncrement(), client, kind, key, value, ack, from, node,
				System.nanoTime());
		write("invoke " + invocation.id() + " c" + client + " " + kind + " " + key + " "
				+ ((value != null) ? value : "-") + " " + ack + "/" + from + " n" + node + " t" + invocation.invoked());
		return invocation;
	}

	Op complete(Invocation invocation, int status, @Nullable String body) {
		Op op = new Op(invocation.id(), invocation.client(), invocation.kind(), invocation.key(),
				(invocation.kind() == Op.Kind.GET) ? ((status == 200) ? body : null) : invocation.value(),
				invocation.ack(), invocation.from(), invocation.node(), invocation.invoked(), System.nanoTime(),
				status);
		add(op);
		String detail = (op.kind() == Op.Kind.GET && status == 200) ? " " + body
				: (status >= 300 && body != null && !body.isBlank()) ? " \"" + oneLine(body) + "\"" : "";
		write("complete " + op.id() + " " + status + detail + " t" + op.completed());
		return op;
	}

	/** An error body on one line, cut short: why a request failed, for people. */
	private static String oneLine(String body) {
		String line = body.strip().replace('\n', ' ').replace('\r', ' ');
		return (line.length() > 160) ? line.substring(0, 160) + "..." : line;
	}

	/** Adds a completed operation as it is (the checker's tests build histories so). */
	synchronized void add(Op op) {
		this.ops.add(op);
	}

	synchronized void window(String fault, long start, long end) {
		this.windows.add(new Window(fault, start, end));
		write("fault " + fault + " t" + start + ".." + end);
	}

	synchronized void note(String text) {
		write("note " + text);
	}

	synchronized List<Op> ops() {
		return List.copyOf(this.ops);
	}

	synchronized List<Window> windows() {
		return List.copyOf(this.windows);
	}

	private synchronized void write(String line) {
		if (this.log == null) {
			return;
		}
		try {
			this.log.write(line);
			this.log.newLine();
		}
		catch (IOException ex) {
			// the log is a record for people; the in-memory history is what is checked
		}
	}

	@Override
	public synchronized void close() {
		if (this.log != null) {
			try {
				this.log.close();
			}
			catch (IOException ex) {
				// best effort
			}
		}
	}

}
