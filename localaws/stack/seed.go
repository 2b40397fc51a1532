package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// seedAccount is one entry of the --seed file. Owner is the principal ARN of the account's owner, as API Gateway
// reports a caller (arn:aws:iam::000000000000:user/local, the local gateway's unsigned caller); an account without
// one has no owner, and only operators reach it.
type seedAccount struct {
	AccountID string `json:"accountId"`
	Currency  string `json:"currency"`
	Balance   int64  `json:"balance"`
	Owner     string `json:"owner,omitempty"`
}

// SeedCaller is the principal that funds the seed's opening balances: an operator (make run names it with
// --operator), whose opening transfers out of the funding accounts are operators' transfers.
const SeedCaller = "arn:aws:iam::" + AccountID + ":user/operator"

// owners returns the owner scope of each seed account ("" for none).
func owners(path string, accounts []seedAccount) ([]string, error) {
	scopes := make([]string, len(accounts))
	for i, a := range accounts {
		if a.Owner == "" {
			continue
		}
		scope, err := apigw.PrincipalScope(a.Owner)
		if err != nil {
			return nil, fmt.Errorf("seed %s: account %s: owner: %w", path, a.AccountID, err)
		}
		scopes[i] = scope
	}
	return scopes, nil
}

// seeder opens the accounts of the seed files: customer accounts whose opening balances are transfers from each
// currency's funding account (ledger.SeedOpenings), so that the ledger explains every balance.
type seeder struct {
	store *ledger.Store
	// machineArn is the state machine the opening transfers' execution ARNs name (no execution exists).
	machineArn string
	logger     *slog.Logger
}

// seed opens the accounts of the --seed file; existing accounts are left alone. An empty path seeds nothing.
func (s seeder) seed(ctx context.Context, path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	var accounts []seedAccount
	if err := json.Unmarshal(b, &accounts); err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	return s.open(ctx, path, accounts)
}

// open opens accounts (of the seed file path) funded from their currencies' funding accounts.
func (s seeder) open(ctx context.Context, path string, accounts []seedAccount) error {
	scopes, err := owners(path, accounts)
	if err != nil {
		return err
	}
	openings := make([]ledger.Opening, len(accounts))
	for i, a := range accounts {
		if a.AccountID == "" || a.Currency == "" || a.Balance < 0 {
			return fmt.Errorf("seed %s: account %+v needs an accountId, a currency and a balance >= 0", path, a)
		}
		openings[i] = ledger.Opening{AccountID: a.AccountID, Currency: a.Currency, Balance: a.Balance, Owner: scopes[i]}
	}
	if len(openings) == 0 {
		return nil
	}
	scope, err := apigw.PrincipalScope(SeedCaller)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := s.store.SeedOpenings(ctx, openings, ledger.SeedOptions{Scope: scope, ExecutionArn: s.executionArn}, start)
	if err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	s.logger.Info("seeded accounts", "file", path, "opened", res.Opened, "funded", res.Funded, "existing", res.Existing,
		"transactions", res.Transactions, "ms", time.Since(start).Milliseconds())
	return nil
}

// executionArn is the execution ARN an opening transfer records: the one a workflow of it would have had.
func (s seeder) executionArn(transferID string) string {
	if s.machineArn == "" {
		return ""
	}
	return strings.Replace(s.machineArn, ":stateMachine:", ":execution:", 1) + ":" + transferID
}

// newSeeder returns the seeder of table.
func newSeeder(db *dynamodb.Client, table, machineArn string, logger *slog.Logger) seeder {
	return seeder{store: ledger.NewStore(db, table), machineArn: machineArn, logger: logger}
}
