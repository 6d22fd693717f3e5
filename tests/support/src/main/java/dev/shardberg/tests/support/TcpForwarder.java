package dev.shardberg.tests.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP address that leads to one server and can be moved to another, as a virtual IP or a DNS name
 * does in a primary failover: {@link #moveTo} sends new connections to the new server and cuts the
 * open ones (clients see their connection lost, and reconnect to the same address). Bytes are
 * passed on unchanged; one thread per direction per connection.
 */
public final class TcpForwarder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TcpForwarder.class);

  private final String name;
  private final ServerSocket listener;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private volatile int targetPort;
  private volatile boolean closed;

  private TcpForwarder(String name, ServerSocket listener, int targetPort) {
    this.name = name;
    this.listener = listener;
    this.targetPort = targetPort;
  }

  /** Listens on a free loopback port and leads to 127.0.0.1:{@code targetPort}. */
  public static TcpForwarder to(String name, int targetPort) throws IOException {
    ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    TcpForwarder forwarder = new TcpForwarder(name, listener, targetPort);
    Thread acceptor = new Thread(forwarder::accept, "forwarder-" + name);
    acceptor.setDaemon(true);
    acceptor.start();
    return forwarder;
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** New connections go to 127.0.0.1:{@code port}; every open one is cut. */
  public void moveTo(int port) {
    LOG.info(
        "Forwarder {} moves from port {} to {}; cutting {} connection(s)",
        name,
        targetPort,
        port,
        open.size());
    targetPort = port;
    for (Socket s : open) {
      closeQuietly(s);
    }
  }

  private void accept() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("Forwarder {} stops accepting: {}", name, e.getMessage());
        }
        return;
      }
      Socket server = new Socket();
      try {
        server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5_000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(server);
        continue;
      }
      open.add(client);
      open.add(server);
      pipe(client, server);
      pipe(server, client);
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException ignored) {
                // one side closed or cut
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "forwarder-" + name + "-pipe");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    for (Socket s : open) {
      closeQuietly(s);
    }
  }
}
