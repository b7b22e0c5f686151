//! Serves the default exclusive model (3 members, one pause) in stateright's
//! Explorer web UI: `cargo run -p neli-models --example explore -- 3000`,
//! then open http://localhost:3000. Runs until interrupted.

use neli_models::{ElectionModelCfg, Faults};
use stateright::Model;

fn main() {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(3000);
    let mut cfg = ElectionModelCfg::exclusive(3);
    cfg.faults = Faults { pauses: 1, ..Faults::default() };
    println!("Explorer on http://localhost:{port} for {cfg:?}");
    cfg.into_model().checker().serve(("localhost", port));
}
