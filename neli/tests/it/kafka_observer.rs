//! The observer over Kafka (`neli::kafka::observe`, a `KafkaReader`): on
//! librdkafka's mock cluster in process, and on tansu next to `neli watch`
//! (a child process) and the members' own status. tansu comes from
//! `scripts/fetch-tansu.sh`; without it the tansu test skips with a notice,
//! except under `CI=true` (see `kafka_tansu`).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use neli::Token;
use neli::observer::{Observer, Update};

use crate::kafka_tansu::{start_tansu, tansu_bin};
use crate::support::{Member, budget, config, history, leaders, mock_election, retry, start_member, wait_stable};

const T: Duration = Duration::from_secs(1);
const S: Duration = Duration::from_secs(3);

/// The observer reports a lease once a heartbeat claims it: the member's
/// first heartbeat after it acquired (one heartbeat interval, T/4), read
/// back within another.
fn seen() -> Duration {
    budget(config("127.0.0.1:1", "g", "m", T, S).explain().expect("valid").heartbeat_interval * 2)
}

/// (name, token, log epoch) of the one member whose own status shows a live
/// lease of role 0.
fn leading(members: &[Member]) -> Option<(String, Token, u64)> {
    let [one] = leaders(members)[..] else { return None };
    let bg = members[one].bg.as_ref()?;
    let token = bg.token()?;
    let status = bg.status().borrow().clone();
    assert_eq!(status.leading.get(&0).map(|l| l.token), Some(token), "status and token agree");
    Some((members[one].name.clone(), token, status.log_epoch))
}

fn observed(o: &Observer) -> Option<(String, Token, u64)> {
    o.leader(0).map(|v| (v.member, v.token, v.log_epoch))
}

/// Polls `f` every 20 ms for up to `limit`; the panic says what was waited
/// for and what `state` showed last.
async fn within<V>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<V>, state: impl Fn() -> String) -> V {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "waited {limit:?} for {what}; last seen: {}", state());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// librdkafka's mock: the observer, reading without a group, reports the
/// leader and token of the members' own status, before and after a handover;
/// the end marker ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_observer_on_the_mock_reports_the_members_leader_and_token_and_stops_on_the_end_marker() {
    let (mock, mut members, topic) = mock_election(2, T, S).await;
    let group = topic.trim_end_matches(".neli").to_owned();
    let obs = neli::kafka::observe(&config(&mock.bootstrap_servers(), &group, "observer", T, S))
        .await
        .expect("the observer connects");
    let first = leading(&members).expect("mock_election returns with one leader");
    let state =
        |obs: &Observer, members: &[Member]| format!("status {:?}, observer {:?}", leading(members), obs.current());
    within(
        seen(),
        "the observer to report the status' leader",
        || observed(&obs).filter(|o| *o == first),
        || state(&obs, &members),
    )
    .await;
    let old = leaders(&members)[0];
    assert_eq!(members[old].bg.take().expect("running").close().await, Ok(neli::Outcome::Closed));
    // One rebalance, held S - 1 s by the mock, a retry, then fresh evidence.
    let limit = budget(S + retry(S) + T);
    let second =
        within(limit, "the other member leading by its own status", || leading(&members), || state(&obs, &members))
            .await;
    assert!(second.1 > first.1, "tokens increase: {second:?} after {first:?}");
    within(
        seen(),
        "the observer to report the new leader",
        || observed(&obs).filter(|o| *o == second),
        || state(&obs, &members),
    )
    .await;
    assert_eq!(obs.counters().undecodable, 0);
    mock.create_topic(&format!("{topic}.ended"), 1).expect("end marker");
    // Looked for every TOPIC_CHECK_INTERVAL.
    let limit = budget(neli::kafka::TOPIC_CHECK_INTERVAL);
    let end = within(limit, "the observer to end on the end marker", || obs.end(), || format!("{obs:?}")).await;
    assert_eq!(end, Ok(neli::Outcome::ElectionEnded));
    for m in &mut members {
        if let Some(bg) = m.bg.take() {
            let _ = bg.close().await;
        }
    }
}

/// `neli watch` as a child, its JSON lines collected as they come.
struct Watch {
    child: Child,
    lines: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Watch {
    fn start(bootstrap: &str, group: &str) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_neli"))
            .args(["watch", "--bootstrap-servers", bootstrap, "--group", group, "--heartbeat-timeout", "1s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn neli watch");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped");
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                sink.lock().unwrap().push(value);
            }
        });
        Watch { child, lines }
    }

    /// Who leads role 0 by the lines so far: the last `acquired` not
    /// followed by its `expired`.
    fn leader(&self) -> Option<(String, Token)> {
        let mut current = None;
        for l in self.lines.lock().unwrap().iter().filter(|l| l["role"] == 0) {
            let who = (l["member"].as_str().unwrap_or_default().to_owned(), Token(l["token"].as_u64().unwrap_or(0)));
            match l["event"].as_str() {
                Some("acquired") => current = Some(who),
                Some("expired") if current.as_ref() == Some(&who) => current = None,
                _ => {}
            }
        }
        current
    }

    fn text(&self) -> String {
        self.lines.lock().unwrap().iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// tansu holds each JoinGroup of a non-static member until S/2 has passed
/// since it arrived, looking once a second (neli/KAFKA.md, "tansu's group
/// coordinator").
fn join_wait(s: Duration) -> Duration {
    s / 2 + Duration::from_secs(1)
}

/// Waits until the observer, then `neli watch`, report `leader` (`who`
/// says which, for the failure message).
async fn both_report(
    leader: &(String, Token, u64),
    who: &str,
    obs: &Observer,
    watch: &Watch,
    state: impl Fn() -> String,
) {
    within(seen(), &format!("the observer to report {who}"), || observed(obs).filter(|o| o == leader), &state).await;
    let want = (leader.0.clone(), leader.1);
    within(seen(), &format!("neli watch to print {who}"), || watch.leader().filter(|w| *w == want), &state).await;
}

/// "Who leads?" answered from anywhere (neli/KAFKA.md, "Using it from Rust"). On tansu, the library
/// observer reports the same leader and token as `neli watch` and as the
/// members' own status, after the election and after a handover (the
/// leader closes). Both start before the members: they wait for a member to
/// create the topic.
#[test]
fn observer_watch_and_status_agree_on_the_leader_and_token_on_tansu() {
    let Some(bin) = tansu_bin() else { return };
    let tansu = start_tansu(&bin);
    let group = format!("observed-{}", std::process::id());
    let watch = Watch::start(&tansu.bootstrap, &group);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let cfg = |name: &str| config(&tansu.bootstrap, &group, name, T, S);
        let obs = neli::kafka::observe(&cfg("observer")).await.expect("the observer connects to tansu");
        let mut members = vec![start_member(&cfg("m0")).await, start_member(&cfg("m1")).await];
        let started = Instant::now();
        let formed = budget(S + T + (join_wait(S) + retry(S)) * 2);
        assert!(
            wait_stable(&members, Duration::from_secs(3), formed).await,
            "one member leads for 3 s within {formed:?}:{}",
            history(&members, started)
        );
        let state = |members: &[Member]| {
            format!(
                "status {:?}, observer {:?}, neli watch {:?} from lines:\n{}",
                leading(members),
                obs.current(),
                watch.leader(),
                watch.text()
            )
        };
        let first = leading(&members).expect("one leader");
        both_report(&first, "the status' leader", &obs, &watch, || state(&members)).await;

        let mut updates = obs.updates();
        let old = leaders(&members)[0];
        let closed_at = Instant::now();
        assert_eq!(members[old].bg.take().expect("running").close().await, Ok(neli::Outcome::Closed));
        // The leave starts a rebalance: the survivor's JoinGroup is held
        // (join_wait), a retry, then fresh evidence (T).
        let limit = budget(join_wait(S) + retry(S) + T);
        let second = within(
            limit,
            "the other member leading by its own status",
            || leading(&members),
            || format!("{}{}", state(&members), history(&members, closed_at)),
        )
        .await;
        assert_ne!(second.0, first.0);
        assert!(second.1 > first.1, "tokens increase: {second:?} after {first:?}");
        both_report(&second, "the new leader", &obs, &watch, || state(&members)).await;
        let want = (second.0.clone(), second.1);
        // The observer's stream told the same story as watch's lines.
        let mut told = Vec::new();
        while let Some(Some(u)) = futures::FutureExt::now_or_never(futures::StreamExt::next(&mut updates)) {
            told.push(u);
        }
        let acquired: Vec<(String, Token)> = told
            .iter()
            .filter_map(|u| match u {
                Update::Acquired(v) => Some((v.member.clone(), v.token)),
                _ => None,
            })
            .collect();
        assert_eq!(acquired, [want], "the observer's updates since the close: {told:?}");
        assert_eq!(obs.counters().undecodable, 0);
        eprintln!("observer and neli watch agreed with the members' status; lines:\n{}", watch.text());
        for m in &mut members {
            if let Some(bg) = m.bg.take() {
                let _ = bg.close().await;
            }
        }
        assert_eq!(obs.close().await, Ok(neli::Outcome::Closed));
    });
}
