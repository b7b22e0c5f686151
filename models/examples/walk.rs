use neli_models::ElectionModelCfg;
use stateright::Model;
fn main() {
    let cfg = ElectionModelCfg::exclusive(3);
    let m = cfg.into_model();
    let mut s = m.init_states().remove(0);
    let mut seed = 7u64;
    for _ in 0..60 {
        let mut acts = Vec::new();
        m.actions(&s, &mut acts);
        if acts.is_empty() { break; }
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let a = acts[(seed >> 33) as usize % acts.len()];
        s = m.next_state(&s, a).unwrap();
        println!("t={} {:?} -> {} log={:?}", s.now, a, neli_models::leadership(&m, &s), s.logs);
    }
}
