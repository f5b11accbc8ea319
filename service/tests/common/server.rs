//! A server on an ephemeral loopback port in the test process, and a
//! channel to it.

use service::{Running, ServerConfig};
use std::net::SocketAddr;
use std::time::Duration;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// Serves `config` on a free loopback port, on the test's runtime, and
/// returns once its health says SERVING: its set-up (the agents' work
/// queued, the store opened) is done, so a test reading the store sees it
/// whole. It stops when dropped.
pub async fn serve_on_loopback(config: ServerConfig) -> Running {
    let server = service::spawn(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), config).unwrap();
    let mut health = HealthClient::new(channel(server.addr).await);
    for _ in 0..250 {
        let request = HealthCheckRequest { service: String::new() };
        if let Ok(reply) = health.check(request).await {
            if reply.into_inner().status == ServingStatus::Serving as i32 {
                return server;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server at {} never reported SERVING", server.addr)
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
    panic!("the server at {} does not accept connections", addr)
}
