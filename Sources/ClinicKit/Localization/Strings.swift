import Foundation

/// Every text of the domain a person reads, by key, in English and Russian: refusals, statuses,
/// messages to patients. `{0}`, `{1}`… are replaced by the message's arguments; `{0f}` by the
/// argument read as a term (a field name or a status) and translated. The tables are in one file
/// an area, English and Russian side by side. A front's own words (menus, prompts, table headers)
/// are the front's, rendered with `render`.
public enum MessageKey: String, Sendable, CaseIterable, Codable {
    // Storage and migrations, backups, keys and the audit trail (StorageStrings.swift)
    case migrationMalformed, migrationForeignKeys, migrationsMissing, migrationSequence, migrationChanged
    case migrationTargetRange, databaseTooNew, databaseUnavailable, databaseBusy, storageFailure, textNotStorable
    case storedValueUnreadable, resourcesMissing, internalError, databaseDamaged, databaseReadOnly
    case databaseReadOnlyOutdated, databaseInsecure, backupExists, backupUnwritable, backupDamaged, backupNotOurs
    case backupSetting, keyUnwritable, keyInsecure, keyUnreadable, keyMissing, keyWrong, personalUnreadable
    case backupOtherKey, auditKeyUnreadable, auditKeyMissing, auditKeyWrong, auditKeyMismatch, auditNotKeyed
    case auditRowUnreadable, auditRowsUnreadable
    case storeURLInvalid, storeSchemeUnsupported, storePasswordInURL, storeParameterUnknown, storeParameterInvalid
    case storeSeveralHosts, storeUnreachable, storeAuthFailed, storeDatabaseMissing, storeOperationUnsupported, storeTLSSetup
    case storePasswordFileInsecure, storeConnectionLost, storeSchemaIncomplete
    case copyTargetNotEmpty, copyTargetFileExists, copyTargetNotMigrated, copySourceNotMigrated, copySourceMissing
    case copySchemaDiffers, copyRowRefused, copyCountMismatch, copySameStore, copyUnsupported, copyKeyConflict
    // The clinic directory and its import (DirectoryStrings.swift)
    case importNoHeader, importMissingColumns, importInvalidUTF8, importUnterminatedQuote, importBadQuote
    case importDuplicateId, importColumnCount, importControlCharacter, importEmptyId, importEmptyName, importNameInvalid
    case importFieldTooLong, importBadCoordinates, importBadFlag, importBadTimeZone, importRejected, clinicExists
    case limitRange, clinicNotFound, specializationInvalid, specializationUnknown, departmentExists, doctorNameInvalid
    case workingHoursInvalid, departmentNotFound, doctorNotFound, fileUnreadable, importBadHeader, clinicNameShared
    case kindGeneral, kindCriticalAccess, kindWomen, kindChildren, kindPsychiatric, kindLongTermCare, kindRehabilitation
    case kindMilitary, kindSpecial, kindChronicDisease
    // Accounts, sessions, passwords and privacy (AccountStrings.swift)
    case sessionFileLink, sessionFileUnwritable, sessionFileInsecure, notLoggedIn, invalidCredentials, loginInvalid
    case fieldEmpty, fieldLettersOnly, streetInvalid, houseInvalid, cityUnknown, passwordsDiffer, passwordTooShort
    case passwordTooLong, passwordContainsName, passwordCommon, accountLocked, privacyChanged, passwordChanged
    case accountDeleted, passwordContainsLogin, privacyRequired, loginTaken, clientNotFound, privacyPolicy, passwordRules
    // Appointments and scheduling: times, slots, hours, visit types, statuses (AppointmentStrings.swift)
    case invalidTime, timeDoesNotExist, invalidDay, visitTypeNotFound, visitTypeNameInvalid, visitTypeDurationInvalid
    case visitTypePriceInvalid, cannotReschedule, cannotCancel, notesTooLong, notesControl, appointmentNotFound
    case notYourAppointment, resourceNotFound, holdNotFound, holdsPerDoctorDay, attachmentUndecodable, attachmentPixels, attachmentDecodeWork, attachmentEmpty, attachmentTooLarge, attachmentUnsupported, attachmentTypeMismatch, attachmentNameInvalid, attachmentPDFActive, attachmentTooLate, attachmentNotFound, attachmentNotYours, attachmentLimit, attachmentOutputExists, attachmentOutputUnwritable, threadNotFound, threadAnswerSubject, threadAnswerBody, potentialWhere, potentialNearHome, potentialWindow, slotInPast, slotTaken, slotOutsideHours, overlapping, overlappingUnknown, slotTooSoon
    case threadTooFast, threadLimit, threadClosedAfterCancel
    case slotTooFar, tooLate, tooClose, limitReached, transitionRefused, notStartedYet, checkInNotToday, daysRange, settingUnknown, settingRange
    case exceptionInvalid, exceptionNotFound, eventBooked, eventRescheduled, findVisitTooLong, findIncomplete
    case beforeInPast, doctorUnknown, exceptionOverlaps, timeHasSeconds, booked, rescheduled, cancelled
    case statusScheduled, statusConfirmed, statusCompleted, statusCancelled, statusNoShow, statusArrived
    case statusInProgress
    // The staff's refusals (StaffStrings.swift)
    case staffRowInvalid, staffForbidden, staffDoctorRequired, staffDoctorOnlyForDoctors, staffNotFound
    case staffNotLoggedIn, staffReasonRequired, staffReasonInvalid, staffPatientNotFound, staffPatientIdNotFound, staffPatientChoice, staffPatientQuery, staffPatientUnavailable
    case staffHoursConflict, staffHoursChanged, staffMessageTarget, staffNoReason
    case walkInBirthDate, walkInPhone, walkInNotWalkIn, claimCodeWrong
    // Geography: places, coordinates, geocoders (GeographyStrings.swift)
    case geocodeSuggestion, whichPlace, cityInvalid, gazetteerMissing, geocoderSetting, coordinatesInvalid
    case coordinatesOutOfRange, addressInvalid, geocodeFailed, geocoderUnavailable, geocoderBadAnswer, geocoderTimeout
    case locationChoice, noHomeCoordinates, radiusInvalid, limitBetween
    // The waitlist (WaitlistStrings.swift)
    case waitlistEntryNotFound, waitlistOfferNotFound, waitlistAlreadyWaiting, waitlistEntriesLimit, waitlistWindowInvalid
    case waitlistWindowBeyondHorizon, waitlistHoursInvalid, waitlistWeekdaysInvalid, waitlistNoDoctor, waitlistAppointmentInvalid
    case waitlistOfferClosed, waitlistOfferLapsed, waitlistOfferSubject, waitlistOfferBody, waitlistStatusWaiting
    case textsUnavailable
    case waitlistStatusPaused, waitlistOfferTakenSubject, waitlistOfferTakenBody
    case waitlistStatusOffered, waitlistStatusBooked, waitlistStatusLeft, waitlistAnyDoctor, waitlistEveryDay
    case waitlistPriorityInvalid, waitlistOfferOpen, waitlistOfferAccepted, waitlistOfferDeclined, waitlistOfferLapsedStatus, waitlistOfferWithdrawn
    // Text messages: the mobile number, what is texted, replies (TextStrings.swift)
    case phoneInvalid, phoneNotMobile, phoneCodeWrong, phoneCodeTooSoon, phoneNoPending, phoneNone, textUnknownNumber
    case textKeyWrong, textReportUnknown, smsSettingInvalid, smsFailed, offerLinkInvalid, textCode, textReminder, textOffer
    case textClinicCancelled, textStopped, textStarted, textConfirmed, textCancelled, textWhich, textNothingDue
    case textNotUnderstood, textCannotCancel, reminderCantCome, cannotConfirm
    case phoneCountry, textCodeBudgetSpent, mailCodeBudgetSpent, codesPerDaySpent, codesPerHourSpent, textWhichOne
    // Messages to patients, e-mail and calendars (MessageStrings.swift)
    case messageDetails, messageBookedSubject, messageBookedBody, messageRescheduledSubject, messageRescheduledBody, messageClinicRescheduledBody
    case messageCancelledSubject, messageCancelledBody, messageClinicCancelledSubject, messageClinicCancelledBody
    case messageZoneSubject, messageZoneBody, messageReminderSubject, messageReminderBody, messageClinicSubject
    case messageTextInvalid, claimCodeSubject, claimCodeBody, emailCodeSubject, emailCodeBody, emailInvalid, emailCodeWrong, emailNoPending
    case messageNotFound, calendarTokenInvalid, icsSummary, icsDescription, icsAlarm
    case mailSettingInvalid, mailFailed, messageCalendarRenewedSubject, messageCalendarRenewedBody, emailCodeTooSoon
    // What API clients send that the library checks (RequestStrings.swift; the server's own
    // words, HTTP's and its settings', are ClinicServer's `ServerText`)
    case fieldTextInvalid, idempotencyKeyOtherRequest, idempotencyKeyInvalid, cursorInvalid, sessionNotFound
}

public enum Strings {
    public static func text(_ key: MessageKey, _ language: Language, _ arguments: [String] = []) -> String {
        let table = language == .ru ? ru : en
        return render(table[key] ?? en[key] ?? key.rawValue, language, arguments)
    }

    /// A template with its arguments in place: `{0}`, `{1}`… as they are, `{0f}` read as a term
    /// (a field name or a status) and `{0s}` as specialization keys, both in the language. The
    /// fronts render their own words with it, so that their templates mean what these do.
    public static func render(_ template: String, _ language: Language, _ arguments: [String]) -> String {
        guard !arguments.isEmpty else { return template }
        // One pass over the template, in Swift: Foundation's replacingOccurrences was most of
        // the CPU time of the messages a booking writes. An argument is never read as a
        // template itself ("{1}" inside the first argument stays as it is).
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let after = rest[rest.index(after: open)...]
            let digitsEnd = after.firstIndex { !($0.isASCII && $0.isNumber) } ?? after.endIndex
            var close = digitsEnd
            let asTerm = close < after.endIndex && after[close] == "f"
            let asSpecializations = close < after.endIndex && after[close] == "s"
            if asTerm || asSpecializations { close = after.index(after: close) }
            if digitsEnd > after.startIndex, close < after.endIndex, after[close] == "}",
               let index = Int(after[after.startIndex..<digitsEnd]), index < arguments.count {
                // An argument is data (a name, a reason): shown, never obeyed (`withoutControls`).
                let argument = arguments[index].withoutControls(keeping: ["\n"])
                result += asTerm ? term(argument, language)
                    : asSpecializations ? specializations(argument, language) : argument
                rest = after[after.index(after: close)...]
            } else {
                result.append("{")
                rest = after
            }
        }
        result += rest
        return result
    }

    /// `{Ns}`: an argument of specialization keys, comma-separated, as names in the language.
    static func specializations(_ keys: String, _ language: Language) -> String {
        keys.split(separator: ",").map { Specialization.displayName(String($0), language).lowercased() }.joined(separator: ", ")
    }

    /// A field name or status used as an argument, in the language. A status is named as the
    /// screens name it (`arrived` is "checked in"), never by its internal name (issue 42).
    static func term(_ field: String, _ language: Language) -> String {
        if let status = AppointmentStatus(rawValue: field) { return status.text(language) }
        if let status = WaitlistOfferStatus(rawValue: field) { return status.text(language) }
        guard language == .ru else { return field.replacingOccurrences(of: "_", with: " ") }
        let names = ["name": "имя", "surname": "фамилия", "street": "улица", "house": "дом", "city": "город",
                     "login": "логин", "password": "пароль", "address": "адрес", "description": "описание",
                     "phone": "телефон", "website": "сайт", "category": "категория", "zip": "индекс",
                     "state": "штат", "time_zone": "часовой пояс", "external_id": "внешний id",
                     "lat": "широта", "lon": "долгота"]
        return names[field] ?? field
    }

    /// The area tables (Localization/*Strings.swift), one a file; a key in more than one is a
    /// mistake the tests catch.
    static let tablesEN = [storageEN, directoryEN, accountEN, appointmentEN, staffEN, geographyEN, messageEN, requestEN, waitlistEN, textEN]
    static let tablesRU = [storageRU, directoryRU, accountRU, appointmentRU, staffRU, geographyRU, messageRU, requestRU, waitlistRU, textRU]

    /// Every table as one.
    public static let en = merged(tablesEN)
    public static let ru = merged(tablesRU)

    static func merged(_ tables: [[MessageKey: String]]) -> [MessageKey: String] {
        tables.reduce(into: [:]) { result, table in result.merge(table) { first, _ in first } }
    }
}
