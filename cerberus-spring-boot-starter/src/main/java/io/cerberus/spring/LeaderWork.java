package io.cerberus.spring;

/**
 * A bean whose work runs only while its instance leads an election: the starter contends for
 * {@link #leadership()} when the application starts ({@link io.cerberus.Cerberus#leadership}), calls
 * {@link #lead} when this instance is elected and {@link #stepDown} when it no longer leads or is in
 * doubt (then {@link #lead} again with the same term once the engine vouches for it), and steps down
 * at once when the application stops, so another instance takes over without waiting for a lease.
 *
 * <pre>{@code
 * @Component
 * class InvoiceRun implements LeaderWork {
 *     public String leadership() { return "billing"; }
 *     public void lead(long term) { invoices.resume(term); }     // give the term with every write
 *     public void stepDown(String reason) { invoices.pause(); }
 * }
 * }</pre>
 *
 * <p>Both calls come one at a time, in order, on the client's event thread: start or stop the work
 * there and return; run it on an executor of your own. Several beans may name one election.
 */
public interface LeaderWork {

    /** @return the election's name, shared by the instances that may do this work */
    String leadership();

    /**
     * This instance leads: start the work.
     *
     * @param term the term, strictly larger than every earlier leader's (the fencing token), or -1 on
     *     an engine without fencing tokens
     */
    void lead(long term);

    /**
     * This instance no longer leads, or cannot vouch for it now: stop the work.
     *
     * @param reason why, one sentence
     */
    void stepDown(String reason);
}
