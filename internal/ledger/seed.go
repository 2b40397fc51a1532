package ledger

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// OriginOpeningBalance marks a transfer record that SeedOpenings wrote: an opening balance funded from the
// currency's funding account, COMPLETED at once, with no workflow execution behind it.
const OriginOpeningBalance = "opening-balance"

// OpeningReference is the reference of an opening-balance transfer.
const OpeningReference = "opening balance"

// FundingAccountID is the id of the funding account SeedOpenings funds a currency's opening balances from:
// funding-<currency>, for example funding-EUR.
func FundingAccountID(currency string) string { return "funding-" + currency }

// Opening is an account to open with a balance, funded by a transfer from its currency's funding account.
type Opening struct {
	AccountID string
	Currency  string
	Balance   int64
	// Owner is the account's owner, a caller scope; empty opens an account without one, which only operators reach.
	Owner string
}

// SeedOptions are the settings of SeedOpenings.
type SeedOptions struct {
	// Scope is the caller scope the opening transfers belong to: the operator who funds the accounts (the opening
	// transfers are operators' transfers out of the funding account).
	Scope string
	// ExecutionArn names the execution an opening transfer would have; nil leaves it empty. No execution exists:
	// GET /transfers/{id}/history shows the ledger legs only.
	ExecutionArn func(transferID string) string
}

// SeedResult counts what SeedOpenings did.
type SeedResult struct {
	// Opened is the number of accounts opened, Funded those of them with a balance (an opening transfer each).
	Opened, Funded int
	// Existing is the number of accounts that existed already and were left alone.
	Existing int
	// Transactions is the number of TransactWriteItems calls that committed.
	Transactions int
}

// openingsPerTransaction is how many accounts one seed transaction opens: four items each (the account, the
// transfer record, its DEBIT and CREDIT entries) and the funding account's update, within TransactWriteItems' 100.
const openingsPerTransaction = 24

// seedRetries bounds the attempts of one seed transaction cancelled by contention or throttling.
const seedRetries = 8

// OpeningTransferID is the id of the transfer that funds accountID's opening balance: derived from the account id
// alone, so a restart of the seed finds the same transfer.
func OpeningTransferID(scope, accountID string) string {
	hash := KeyHash(scope, OpeningKey(accountID))
	sum := sha256.Sum256([]byte("opening-transfer\x00" + accountID))
	return "tr_" + hash + idEncoding.EncodeToString(sum[:10])
}

// OpeningKey is the Idempotency-Key recorded on an opening transfer.
func OpeningKey(accountID string) string { return "opening-balance:" + accountID }

// SeedOpenings opens customer accounts with opening balances that the ledger explains: each currency gets a funding
// account (FundingAccountID, kind funding, opened at 0), and each account with a balance gets a COMPLETED transfer
// from it (reference OpeningReference, origin OriginOpeningBalance) with its DEBIT and CREDIT entries, so the sum of
// the currency's balances stays 0. Accounts are written openingsPerTransaction to a TransactWriteItems, with one
// update of the funding account for the lot; an account and its opening transfer are always written together.
// Accounts that exist are left alone, whatever happened to them since (one TransactGetItems per 100 finds them first),
// so the seed can be repeated, for example when the stack restarts on the same --data-dir.
func (s *Store) SeedOpenings(ctx context.Context, openings []Opening, opts SeedOptions, now time.Time) (SeedResult, error) {
	var res SeedResult
	seen := map[string]bool{}
	var currencies []string
	byCurrency := map[string][]Opening{}
	for _, o := range openings {
		switch {
		case o.AccountID == "" || o.Currency == "" || o.Balance < 0:
			return res, fmt.Errorf("seed %q: needs an accountId, a currency and a balance >= 0", o.AccountID)
		case seen[o.AccountID]:
			return res, fmt.Errorf("seed %s: listed twice", o.AccountID)
		case o.AccountID == FundingAccountID(o.Currency):
			return res, fmt.Errorf("seed %s: that is the funding account of %s, which the seed opens itself", o.AccountID, o.Currency)
		}
		seen[o.AccountID] = true
		if byCurrency[o.Currency] == nil {
			currencies = append(currencies, o.Currency)
		}
		byCurrency[o.Currency] = append(byCurrency[o.Currency], o)
	}
	for _, cur := range currencies {
		if err := s.ensureFunding(ctx, cur, now); err != nil {
			return res, err
		}
	}
	exists, err := s.existingAccounts(ctx, openings)
	if err != nil {
		return res, err
	}
	for _, cur := range currencies {
		var todo []Opening
		for _, o := range byCurrency[cur] {
			if exists[o.AccountID] {
				res.Existing++
				continue
			}
			todo = append(todo, o)
		}
		// One transaction at a time: every one updates the funding account, so concurrent ones would only
		// conflict (measured: four at once took twice as long as one after another).
		for len(todo) > 0 {
			n := min(len(todo), openingsPerTransaction)
			done, err := s.seedBatch(ctx, cur, todo[:n], opts, now)
			res.Existing += n - len(done)
			res.Opened += len(done)
			for _, o := range done {
				if o.Balance > 0 {
					res.Funded++
				}
			}
			if len(done) > 0 {
				res.Transactions++
			}
			if err != nil {
				return res, err
			}
			todo = todo[n:]
		}
	}
	return res, nil
}

// ensureFunding opens the currency's funding account at 0 unless it exists; one that exists must be a funding
// account of that currency.
func (s *Store) ensureFunding(ctx context.Context, currency string, now time.Time) error {
	id := FundingAccountID(currency)
	_, err := s.CreateAccountOfKind(ctx, id, currency, KindFunding, 0, now)
	if !errors.Is(err, ErrAccountExists) {
		return err
	}
	a, err := s.GetAccount(ctx, id)
	if err != nil {
		return fmt.Errorf("seed: read funding account %s: %w", id, err)
	}
	if a.AccountKind() != KindFunding || a.Currency != currency {
		return fmt.Errorf("seed: %s exists as a %s account in %s, not as the funding account of %s", id, a.AccountKind(), a.Currency, currency)
	}
	return nil
}

// existingAccounts returns which of the openings' accounts exist: one TransactGetItems per 100 accounts.
func (s *Store) existingAccounts(ctx context.Context, openings []Opening) (map[string]bool, error) {
	exists := map[string]bool{}
	for start := 0; start < len(openings); start += 100 {
		chunk := openings[start:min(start+100, len(openings))]
		keys := make([]map[string]ddbtypes.AttributeValue, len(chunk))
		for i, o := range chunk {
			keys[i] = accountKey(o.AccountID)
		}
		items, err := s.getItems(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("seed: find existing accounts: %w", err)
		}
		for _, item := range items {
			if pk, ok := item["pk"].(*ddbtypes.AttributeValueMemberS); ok {
				exists[strings.TrimPrefix(pk.Value, accountPrefix)] = true
			}
		}
	}
	return exists, nil
}

// seedBatch opens batch (one currency, at most openingsPerTransaction accounts) in one transaction and returns the
// accounts it opened. An account found to exist meanwhile is dropped and the rest tried again; so is a transaction
// cancelled by contention, a few times.
func (s *Store) seedBatch(ctx context.Context, currency string, batch []Opening, opts SeedOptions, now time.Time) ([]Opening, error) {
	for attempt := 1; len(batch) > 0; attempt++ {
		in, err := s.seedTransaction(currency, batch, opts, now)
		if err != nil {
			return nil, err
		}
		_, err = s.db.TransactWriteItems(ctx, in)
		if err == nil {
			return batch, nil
		}
		var tce *ddbtypes.TransactionCanceledException
		if !errors.As(err, &tce) {
			return nil, fmt.Errorf("seed %s accounts: %w", currency, translate(err))
		}
		// Items are laid out account by account (the account's Put first, then its transfer's items) and the
		// funding account's update last.
		var keep []Opening
		pos, conflict := 0, false
		for _, o := range batch {
			items := 1
			if o.Balance > 0 {
				items = 4
			}
			codes := reasonCodes(tce.CancellationReasons, pos, items)
			switch {
			case codes[0] == codeConditionFailed:
				// The account exists now: left alone.
			case contains(codes[1:], codeConditionFailed):
				return nil, fmt.Errorf("seed %s: its opening transfer %s exists without the account", o.AccountID, OpeningTransferID(opts.Scope, o.AccountID))
			default:
				keep = append(keep, o)
			}
			if contains(codes, codeConditionFailed) {
				conflict = true
			}
			pos += items
		}
		if last := reasonCodes(tce.CancellationReasons, pos, 1); last[0] == codeConditionFailed {
			return nil, fmt.Errorf("seed %s accounts: the funding account %s refused the debit (gone, another kind or currency, or at its floor)", currency, FundingAccountID(currency))
		}
		if !conflict {
			if attempt >= seedRetries {
				return nil, fmt.Errorf("seed %s accounts: %d attempts: %w", currency, attempt, ErrUnavailable)
			}
			if err := sleepCtx(ctx, time.Duration(attempt*attempt)*10*time.Millisecond); err != nil {
				return nil, fmt.Errorf("seed %s accounts: %w", currency, err)
			}
		}
		batch = keep
	}
	return nil, nil
}

// reasonCodes returns the cancellation codes of items [pos, pos+n), "" where DynamoDB gave none.
func reasonCodes(reasons []ddbtypes.CancellationReason, pos, n int) []string {
	codes := make([]string, n)
	for i := range codes {
		if pos+i < len(reasons) {
			codes[i] = aws.ToString(reasons[pos+i].Code)
		}
	}
	return codes
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// seedTransaction builds the transaction that opens batch: per account its Put (at its opening balance, version 2
// when funded: its CREDIT is its first ledger entry) and, when funded, its COMPLETED transfer record and its DEBIT
// and CREDIT entries; last, the funding account's debit of the batch's total, one version per DEBIT.
func (s *Store) seedTransaction(currency string, batch []Opening, opts SeedOptions, now time.Time) (*dynamodb.TransactWriteItemsInput, error) {
	table := aws.String(s.table)
	notExists := aws.String("attribute_not_exists(pk)")
	ts := now.UTC().Format(TimeLayout)
	funding := FundingAccountID(currency)
	put := func(v any) (ddbtypes.TransactWriteItem, error) {
		item, err := attributevalue.MarshalMap(v)
		if err != nil {
			return ddbtypes.TransactWriteItem{}, fmt.Errorf("seed: encode: %w", err)
		}
		return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: table, Item: item, ConditionExpression: notExists}}, nil
	}
	var items []ddbtypes.TransactWriteItem
	var total, debits int64
	for _, o := range batch {
		acct := newAccount(o.AccountID, currency, KindCustomer, o.Balance, now)
		acct.Owner = o.Owner
		var values []any
		if o.Balance == 0 {
			values = []any{acct}
		} else {
			acct.Version = 2
			id := OpeningTransferID(opts.Scope, o.AccountID)
			arn := ""
			if opts.ExecutionArn != nil {
				arn = opts.ExecutionArn(id)
			}
			pk, _ := RecordKey(id)
			rec := Transfer{
				PK: pk, SK: transferSK, TransferID: id, Scope: opts.Scope, IdempotencyKey: OpeningKey(o.AccountID),
				Status: StatusCompleted, SourceAccountID: funding, DestinationAccountID: o.AccountID,
				Amount: o.Balance, Currency: currency, Reference: OpeningReference, ExecutionArn: arn,
				CreatedAt: ts, UpdatedAt: ts, CompletedAt: ts, Legs: []string{LegDebit, LegCredit},
				RetainUntil: KeepForever, ExpiresAt: KeepForever, Origin: OriginOpeningBalance, Operator: true,
			}
			debit := newEntry(LegRequest{TransferID: id, Leg: LegDebit, AccountID: funding, Amount: o.Balance,
				Currency: currency, ExecutionArn: arn, DestinationAccountID: o.AccountID, Operator: true}, now)
			credit := newEntry(LegRequest{TransferID: id, Leg: LegCredit, AccountID: o.AccountID, Amount: o.Balance,
				Currency: currency, ExecutionArn: arn}, now)
			values = []any{acct, rec, debit, credit}
			if o.Balance > math.MaxInt64-total {
				return nil, fmt.Errorf("seed %s accounts: the opening balances overflow", currency)
			}
			total += o.Balance
			debits++
		}
		for _, v := range values {
			item, err := put(v)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
	}
	if debits > 0 {
		items = append(items, ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{
			TableName:                table,
			Key:                      accountKey(funding),
			UpdateExpression:         aws.String("SET balance = balance - :total, updatedAt = :now ADD version :debits"),
			ConditionExpression:      aws.String("attribute_exists(pk) AND #kind = :funding AND currency = :currency AND balance >= :floor"),
			ExpressionAttributeNames: map[string]string{"#kind": "kind"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
				":total":    numberAV(total),
				":now":      stringAV(ts),
				":debits":   numberAV(debits),
				":funding":  stringAV(KindFunding),
				":currency": stringAV(currency),
				":floor":    numberAV(math.MinInt64 + total),
			},
		}})
	}
	return &dynamodb.TransactWriteItemsInput{TransactItems: items}, nil
}
