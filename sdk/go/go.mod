module github.com/gatepost/gatepost-go

go 1.19
