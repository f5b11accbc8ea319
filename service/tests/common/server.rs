//! A server on an ephemeral loopback port in the test process, and a
//! channel to it.

use service::{Running, ServerConfig};
use std::net::SocketAddr;
use std::time::Duration;
use tonic::transport::Channel;

/// Serves `config` on a free loopback port, on the test's runtime; it stops when dropped.
pub async fn serve_on_loopback(config: ServerConfig) -> Running {
    service::spawn(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), config).unwrap()
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
