import Foundation

// The inbox's use cases as awaited operations of a store (issue 56): what a patient's request
// reads and changes of their messages, each one statement on PostgreSQL with no thread waiting
// for it. The rules are few and here: another patient's message is not found, reading one again
// changes nothing, a patient who is gone is not signed in (`ClientController+Mail`).

/// The awaited inbox a `ClinicStore` offers.
public protocol InboxStore: Sendable {
    /// The patient's messages, newest first (`unreadOnly`: those not read yet), at most `limit`;
    /// nil when there is no such patient.
    func inbox(clientId: Int64, unreadOnly: Bool, limit: Int) async throws -> [InboxMessage]?
    /// Marks the patient's message read at `now` unless it was read already, and returns it as it
    /// then is; nil when the patient has no such message.
    func markRead(messageId: Int64, clientId: Int64, at now: Date) async throws -> InboxMessage?
    /// Marks every unread message of the patient read at `now`, together; how many were.
    func markAllRead(clientId: Int64, at now: Date) async throws -> Int
    /// How many of the patient's messages are unread (what every web page's header shows).
    func unreadCount(clientId: Int64) async throws -> Int
    /// How many of the clinic's answers in the patient's conversations are unread (one statement).
    func unreadAnswers(clientId: Int64) async throws -> Int
    /// The latest `ThreadLimits.pageDefault` messages (any author, as stored) of each of the
    /// patient's conversations about `appointmentIds`, in the order written, and the key check
    /// (nil when none); one snapshot (one statement and the check on PostgreSQL).
    func clinicAnswers(clientId: Int64, appointmentIds: Set<Int64>) async throws -> (messages: [StoredThreadMessage], keyCheck: String?)
}
