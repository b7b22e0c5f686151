//! Shared set-up: the Docker check, the broker image (built once), one real
//! run at a time (timings on 2 cores must not be skewed by a parallel run).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use neli_sim::Scenario;
use neli_testcontainers::{Broker, BrokerSpec, RealRun, RealRunReport, Step, broker, docker_or_skip};
use tokio::sync::OnceCell;

static SERIAL: Mutex<()> = Mutex::new(());
static SPEC: OnceCell<BrokerSpec> = OnceCell::const_new();

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn scenario_file(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(format!("{name}.toml"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

pub fn scenario_text(text: &str) -> Scenario {
    Scenario::parse(text, "<inline>").unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh broker container (the image built once per test binary),
/// published on the loopback interface only.
pub async fn start_broker() -> Result<Broker, String> {
    let spec = SPEC.get_or_try_init(BrokerSpec::from_env).await.map_err(|e| e.to_string())?;
    let broker = Broker::start(spec).await.map_err(|e| e.to_string())?;
    // A test broker is reachable from this host only.
    let published = neli_testcontainers::broker::published_address(broker.id(), broker::CONTAINER_PORT)
        .map_err(|e| e.to_string())?;
    assert!(published.starts_with("127.0.0.1:"), "broker published on {published}, not on loopback only");
    Ok(broker)
}

/// Runs `steps` against a fresh broker and waits for a stable group after
/// the timeline; `None` when the suite is skipped.
pub fn run_real(s: &Scenario, steps: Vec<Step>, tail_ms: u64) -> Option<RealRunReport> {
    run_real_with(s, steps, tail_ms, true)
}

/// Like [`run_real`]; with `recovery == false` the run ends after the
/// timeline without requiring a stable group (safety is judged either way).
pub fn run_real_with(s: &Scenario, steps: Vec<Step>, tail_ms: u64, recovery: bool) -> Option<RealRunReport> {
    let _serial = serial();
    if !docker_or_skip(&format!("real-broker scenario {}", s.name)).unwrap_or_else(|e| panic!("{e}")) {
        return None;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let outcome = rt.block_on(async {
        let broker = start_broker().await?;
        let run =
            RealRun::new(s, &broker, Path::new(env!("CARGO_BIN_EXE_neli-tc-member"))).map_err(|e| e.to_string())?;
        let run = if recovery { run } else { run.without_recovery() };
        run.play(steps, tail_ms).await.map_err(|e| e.to_string())
    });
    let outcome = outcome.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("--- {} (real, {})", outcome.scenario, std::env::var("NELI_BROKER_IMAGE").unwrap_or("tansu".into()));
    for l in &outcome.trace {
        eprintln!("{l}");
    }
    eprintln!(
        "figures: {:?}\nformed in {} ms, recovered {} ms after the last fault",
        outcome.figures, outcome.formed_ms, outcome.recovered_ms
    );
    Some(outcome)
}

/// Runs a scenario file's faults for the rest of its duration.
pub fn run_file(s: &Scenario) -> Option<RealRunReport> {
    let steps = neli_testcontainers::plan(s).unwrap_or_else(|why| panic!("{} cannot run for real: {why}", s.name));
    let first = s.faults.iter().map(|f| f.get_ref().at.ms()).min().unwrap_or(0);
    run_real(s, steps, s.duration.ms() - first)
}
