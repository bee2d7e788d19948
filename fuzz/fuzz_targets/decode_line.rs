//! Fuzzes the path of every byte a bot writes: the line reader splits the input (at a
//! chunk boundary chosen by the first byte), then each line goes through the strict
//! decoder and, when it fails, the excerpt used in fault reports. Nothing may panic,
//! and no line may exceed the limit.
//!
//! Run (from the repository root): `cargo install cargo-fuzz`, then
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run decode_line --fuzz-dir fuzz -- -max_total_time=60`
//! (`RUSTC_BOOTSTRAP=1` lets a stable toolchain build with the sanitizer flags).
#![no_main]

use libfuzzer_sys::fuzz_target;
use protocol::{decode_bot_message, excerpt, LineReader};

/// Feeds `data` to the reader in chunks of `step` bytes.
struct Chunks<'a> {
    data: &'a [u8],
    step: usize,
}

impl tokio::io::AsyncRead for Chunks<'_> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = self.step.min(self.data.len()).min(buf.remaining());
        buf.put_slice(&self.data[..n]);
        self.data = &self.data[n..];
        std::task::Poll::Ready(Ok(()))
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let limit = 256;
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(_) => return,
    };
    runtime.block_on(async {
        let mut reader = LineReader::with_limit(
            Chunks {
                data: rest,
                step: 1 + first as usize % 64,
            },
            limit,
        );
        while let Ok(Some(line)) = reader.next_line().await {
            assert!(line.as_bytes().len() <= limit);
            if let Err(e) = decode_bot_message(line.as_bytes()) {
                let _ = e.kind();
                let _ = e.to_string();
                let _ = excerpt(line.as_bytes(), 80);
            }
        }
    });
});
