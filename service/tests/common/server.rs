//! A server on an ephemeral loopback port in the test process, and a
//! channel to it.

use service::{serve, ServerConfig};
use std::net::SocketAddr;
use std::time::Duration;
use tonic::transport::Channel;

/// A server on `127.0.0.1:0`, shut down when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// Serves `config` on a free loopback port, on the test's runtime.
pub async fn serve_on_loopback(config: ServerConfig) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        serve(listener, config, async {
            let _ = rx.await;
        })
        .await
        .unwrap()
    });
    TestServer { addr, _shutdown: tx }
}

/// A channel to the server at `addr`, once it accepts connections.
pub async fn channel(addr: SocketAddr) -> Channel {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
    for _ in 0..50 {
        if let Ok(c) = endpoint.connect().await {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server at {addr} does not accept connections")
}
