//! `neli exec --metrics-addr` on tansu, as child processes (the setup of
//! `kafka_tansu`): three members, each serving `/metrics`, `/healthz` and
//! `/leader` on a port of its own. Exactly one reports
//! `neli_leader{role="0"} 1`; after SIGKILL of its `neli` another one does
//! and its acquisitions went up; a SIGSTOPped leader's `/leader` answers
//! 503 once its lease has ended, as soon as it runs again. Skipped without
//! tansu, except under `CI=true` (see `kafka_tansu`).

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::kafka_tansu::{
    Reap, formation, spawn_exec_logged, start_tansu, takeover, tansu_bin, tempdir, wait_until, what_happened,
};
use crate::support::{Signal, budget, http_get, http_request, http_response, sample, served_on, signal};

/// The lease T of `kafka_tansu`'s members.
const T: Duration = Duration::from_secs(1);

struct Served {
    pid: u32,
    addr: String,
}

impl Served {
    fn get(&self, path: &str) -> Option<(u16, String)> {
        http_get(&self.addr, path, budget(Duration::ZERO)).ok()
    }

    /// `neli_leader{role="0"}` and `neli_acquisitions_total{role="0"}`.
    fn leader_and_acquisitions(&self) -> Option<(bool, u64)> {
        let (code, text) = self.get("/metrics")?;
        assert_eq!(code, 200, "{text}");
        let leader = sample(&text, "neli_leader", &[("role", "0")])?;
        let acquisitions = sample(&text, "neli_acquisitions_total", &[("role", "0")])?;
        Some((leader == 1.0, acquisitions as u64))
    }
}

/// Waits up to `limit` for the line `neli exec` prints with its address.
fn address(log: &Path, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(a) = served_on(&std::fs::read_to_string(log).unwrap_or_default()) {
            return a;
        }
        assert!(Instant::now() < deadline, "{} printed no address within {limit:?}", log.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Which of `among` report `neli_leader{role="0"} 1` (a member that does
/// not answer is left out).
fn reporting_leaders(members: &[Served], among: &[usize]) -> Vec<usize> {
    among.iter().copied().filter(|i| members[*i].leader_and_acquisitions().is_some_and(|(l, _)| l)).collect()
}

/// Waits up to `limit` until exactly one of `among` reports leading, the
/// same one for `window` (each join of the formation is a rebalance).
fn one_leader(members: &[Served], among: &[usize], window: Duration, limit: Duration) -> Option<usize> {
    let deadline = Instant::now() + limit;
    let mut since: Option<(usize, Instant)> = None;
    while Instant::now() < deadline {
        match (reporting_leaders(members, among).as_slice(), since) {
            ([one], Some((l, t))) if *one == l => {
                if t.elapsed() >= window {
                    return Some(l);
                }
            }
            ([one], _) => since = Some((*one, Instant::now())),
            _ => since = None,
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn kafka_metrics_one_member_reports_leading_and_a_stopped_leader_answers_503_once_its_lease_ended() {
    let Some(bin) = tansu_bin() else { return };
    let tansu = start_tansu(&bin);
    let dir = tempdir::Dir::new("metrics");
    let file: PathBuf = dir.0.join("leader.log");
    std::fs::write(&file, "").unwrap();
    let group = format!("metrics-{}", std::process::id());
    let extra = ["--metrics-addr".to_owned(), "127.0.0.1:0".to_owned()];
    let (children, logs): (Vec<Child>, Vec<PathBuf>) =
        (0..3).map(|_| spawn_exec_logged(&tansu.bootstrap, &group, &file, &extra)).unzip();
    let members: Vec<Served> = children
        .iter()
        .zip(&logs)
        .map(|(c, log)| Served { pid: c.id(), addr: address(log, budget(Duration::ZERO)) })
        .collect();
    let _reap = Reap(children);

    // Exactly one member reports leading, the others not; /leader agrees.
    let started = Instant::now();
    let all = [0, 1, 2];
    let first = one_leader(&members, &all, 2 * T, formation()).unwrap_or_else(|| {
        panic!(
            "waited {:?} for exactly one member to report neli_leader{{role=\"0\"}} 1 for 2 T{}",
            formation(),
            what_happened(&file)
        )
    });
    eprintln!("first leader reported after {:?}", started.elapsed());
    for (i, m) in members.iter().enumerate() {
        let (code, body) = m.get("/leader").expect("/leader answers");
        assert_eq!(code, if i == first { 200 } else { 503 }, "member {i}: {body}");
        let (code, body) = m.get("/healthz").expect("/healthz answers");
        assert_eq!(code, 200, "member {i}: {body}");
    }
    let others: Vec<usize> = all.into_iter().filter(|i| *i != first).collect();
    let before: Vec<u64> = others.iter().map(|i| members[*i].leader_and_acquisitions().expect("metrics").1).collect();

    // SIGKILL of the leader's neli: another member reports leading, and
    // its acquisitions went up.
    signal(members[first].pid, Signal::KILL);
    let killed = Instant::now();
    let second = one_leader(&members, &others, T, takeover()).unwrap_or_else(|| {
        panic!("waited {:?} for one of {others:?} to report leading after SIGKILL{}", takeover(), what_happened(&file))
    });
    eprintln!("takeover reported {:?} after SIGKILL", killed.elapsed());
    let at = others.iter().position(|i| *i == second).expect("one of the others");
    let acquisitions = members[second].leader_and_acquisitions().expect("metrics").1;
    assert!(acquisitions > before[at], "acquisitions of the new leader: {} before, {acquisitions} now", before[at]);

    // SIGSTOP of the new leader's neli: the third member takes over (which
    // needs the stopped member's session to expire, S > T), so the stopped
    // member's lease has ended, here measured from this process too.
    let third = others.into_iter().find(|i| *i != second).expect("a third member");
    a_stopped_leader_answers_503_once_its_lease_ended(&members, second, third, &file);
    drop(tansu);
}

/// SIGSTOP of leader `second`'s neli: `third` takes over (which needs the
/// stopped member's session to expire, S > T), the stopped member's first
/// answer after SIGCONT says its lease ended, and it counts its fence.
fn a_stopped_leader_answers_503_once_its_lease_ended(members: &[Served], second: usize, third: usize, file: &Path) {
    let (code, body) = members[second].get("/leader").expect("/leader answers");
    assert_eq!(code, 200, "{body}");
    signal(members[second].pid, Signal::STOP);
    let stopped = Instant::now();
    let taken = one_leader(members, &[third], Duration::ZERO, takeover());
    assert_eq!(
        taken,
        Some(third),
        "waited {:?} for the third member to report leading while the leader is stopped{}",
        takeover(),
        what_happened(file)
    );
    let lease_ended = stopped.elapsed();
    assert!(lease_ended > T, "the stopped leader's lease (T = {T:?}) has ended: {lease_ended:?} since SIGSTOP");
    // The request goes out while the member is stopped (the kernel queues
    // it); the first answer after SIGCONT must say the lease ended, before
    // the member's loop has run.
    let pending = http_request(&members[second].addr, "/leader", takeover()).expect("connect while stopped");
    signal(members[second].pid, Signal::CONT);
    let resumed = Instant::now();
    let (code, body) = http_response(pending).expect("an answer after SIGCONT");
    eprintln!(
        "stopped leader: /leader answered {code} {:?} after SIGCONT ({lease_ended:?} after SIGSTOP)",
        resumed.elapsed()
    );
    assert_eq!(code, 503, "{body}");
    assert_eq!(body.trim_end(), "not leader of role 0");
    // The resumed member counted its fence and reports no lease.
    let fenced = wait_until(budget(T), || {
        let (_, text) = members[second].get("/metrics")?;
        let fences: f64 = ["assignment_lost", "membership_rejected", "lease_expired"]
            .iter()
            .filter_map(|c| sample(&text, "neli_fences_total", &[("role", "0"), ("cause", c)]))
            .sum();
        (fences >= 1.0 && sample(&text, "neli_leader", &[("role", "0")]) == Some(0.0)).then_some(text)
    });
    assert!(fenced.is_some(), "the resumed member reports its fence and no lease within {:?}", budget(T));
    // (It rejoins the group, so the next rebalance may give it the role
    // again: at most one leader is all that holds from here.)
    assert!(reporting_leaders(members, &[second, third]).len() <= 1);
}
