//! What crosses the wire, bounded: the sizes of the messages the server
//! reads and writes, status messages cut to [`MAX_STATUS_MESSAGE_BYTES`],
//! and each call's outcome recorded on its span. Both services and the
//! server's set-up use it; it uses none of them.

/// The largest message the server writes, and the largest an agent may send.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The largest `Schedule` request the server reads: 18 times the largest
/// app's (stencil_chain at the size it runs at encodes to 57 KiB, local
/// Laplacian to 22 KiB), small enough that the calls in flight cannot hold
/// much memory.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// The longest status message the server sends or logs: a message quoting
/// user input is cut (gRPC clients commonly refuse metadata over 16 KiB).
pub const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

/// `status` with its message cut to [`MAX_STATUS_MESSAGE_BYTES`].
pub(crate) fn bounded(status: tonic::Status) -> tonic::Status {
    if status.message().len() <= MAX_STATUS_MESSAGE_BYTES {
        return status;
    }
    let message = status.message();
    let mut end = MAX_STATUS_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    tonic::Status::new(status.code(), format!("{}... ({} bytes)", &message[..end], message.len()))
}

/// Records a call's wall time (since `started`) and outcome on the current
/// span (an RPC's), and logs why a refused call was refused; the result,
/// its status message cut to [`MAX_STATUS_MESSAGE_BYTES`] ([`bounded`]).
pub(crate) fn record_outcome<T>(started: std::time::Instant, result: Result<T, tonic::Status>) -> Result<T, tonic::Status> {
    let result = result.map_err(bounded);
    let span = tracing::Span::current();
    span.record("wall_ms", started.elapsed().as_secs_f64() * 1e3);
    match &result {
        Ok(_) => {
            span.record("outcome", "ok");
        }
        Err(status) => {
            span.record("outcome", tracing::field::debug(status.code()));
            tracing::info!(message = status.message(), "refused");
        }
    }
    result
}
