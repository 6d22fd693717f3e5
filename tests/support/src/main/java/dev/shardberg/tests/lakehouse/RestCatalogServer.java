package dev.shardberg.tests.lakehouse;

import java.io.Closeable;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Iceberg REST catalog server in this JVM: Iceberg's own REST servlet and its adapter (from
 * iceberg-core's test jar, what Iceberg tests its REST client against) in an embedded Jetty on a
 * free loopback port, serving the REST catalog protocol over HTTP in front of a backend catalog
 * built from properties, as a REST catalog service fronts its store.
 *
 * <p>Commits reach the backend's own atomic swap: with a {@code JdbcCatalog} backend, the
 * compare-and-set of the metadata location in its database. The backend writes table metadata
 * through its own {@code io-impl}, so it needs the same object store access as the clients.
 */
public final class RestCatalogServer implements AutoCloseable {
  private final Catalog backend;
  private final RESTCatalogAdapter adapter;
  private final Server http;

  private RestCatalogServer(Catalog backend, RESTCatalogAdapter adapter, Server http) {
    this.backend = backend;
    this.adapter = adapter;
    this.http = http;
  }

  /**
   * Starts a server in front of a backend catalog built by Iceberg's {@link
   * CatalogUtil#buildIcebergCatalog} from {@code backendProperties} ({@code catalog-impl}, {@code
   * uri}, {@code warehouse}, {@code io-impl}, …).
   */
  public static RestCatalogServer start(Map<String, String> backendProperties) throws Exception {
    Catalog backend = CatalogUtil.buildIcebergCatalog("rest_backend", backendProperties, null);
    RESTCatalogAdapter adapter = new RESTCatalogAdapter(backend);
    Server http = new Server(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");
    http.setHandler(context);
    try {
      http.start(); // returns once it listens
    } catch (Exception e) {
      closeQuietly(adapter, backend);
      throw e;
    }
    return new RestCatalogServer(backend, adapter, http);
  }

  /** {@code http://127.0.0.1:<port>/}: the REST catalog's {@code uri}. */
  public String uri() {
    int port = ((ServerConnector) http.getConnectors()[0]).getLocalPort();
    return "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port + "/";
  }

  /** The backend catalog, to read what the REST clients committed from the server's side. */
  public Catalog backend() {
    return backend;
  }

  @Override
  public void close() throws Exception {
    try {
      http.stop();
    } finally {
      closeQuietly(adapter, backend);
    }
  }

  private static void closeQuietly(RESTCatalogAdapter adapter, Catalog backend) {
    try {
      adapter.close();
      if (backend instanceof Closeable closeable) {
        closeable.close();
      }
    } catch (Exception e) {
      // the server is going away; nothing it held is needed after this
    }
  }
}
