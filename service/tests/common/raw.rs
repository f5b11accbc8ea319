//! Calls with message bytes as they are, so that hand-made or mutated
//! encodings reach the server's own decoder.

use prost::Message;
use proto::v1::ScheduleReply;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::Status;

/// A codec that sends and receives message bytes as they are, so that
/// mutated encodings reach the server's own decoder.
#[derive(Clone, Copy)]
struct RawCodec;

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
    }
}

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        *self
    }
    fn decoder(&mut self) -> RawCodec {
        *self
    }
}

/// Sends `bytes` as a `Schedule` request; the reply decoded.
pub async fn call_raw(channel: &Channel, bytes: Vec<u8>, deadline: Duration) -> Result<ScheduleReply, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.map_err(|e| Status::unavailable(e.to_string()))?;
    let mut request = tonic::Request::new(bytes);
    request.set_timeout(deadline);
    let path = tonic::codegen::http::uri::PathAndQuery::from_static("/scheduler.v1.Scheduler/Schedule");
    let reply = grpc.unary(request, path, RawCodec).await?.into_inner();
    Ok(ScheduleReply::decode(reply.as_slice()).expect("the server sends a valid reply"))
}
