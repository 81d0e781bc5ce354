module github.com/deployctl/deployctl

go 1.25
