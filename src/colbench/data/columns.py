"""Column names and Arrow types of the real data sets, shared by their sources and their synthetic twins."""

from __future__ import annotations

TAXI_2010_COLUMNS = ("vendor_id", "pickup_datetime", "dropoff_datetime", "passenger_count", "trip_distance",
                     "pickup_longitude", "pickup_latitude", "rate_code", "store_and_fwd_flag",
                     "dropoff_longitude", "dropoff_latitude", "payment_type", "fare_amount", "surcharge",
                     "mta_tax", "tip_amount", "tolls_amount", "total_amount")
TAXI_2010_SCHEMA = tuple(zip(TAXI_2010_COLUMNS, (
    "string", "timestamp[s]", "timestamp[s]", "int64", "double", "double", "double", "int64",
    "string",  # empty, 0/1 for CMT, and the one "*" of the real file: string
    "double", "double", "string", "double", "double", "double", "double", "double", "double"), strict=True))

FANNIE_COLUMNS = (
    "LOAN_ID", "ACT_PERIOD", "SERVICER", "ORIG_RATE", "CURRENT_UPB", "LOAN_AGE", "REM_MONTHS",
    "ADJ_REM_MONTHS", "MATR_DT", "MSA", "DLQ_STATUS", "RELOCATION_MORTGAGE_INDICATOR", "Zero_Bal_Code",
    "ZB_DTE", "LAST_PAID_INSTALLMENT_DATE", "FORECLOSURE_DATE", "DISPOSITION_DATE", "FORECLOSURE_COSTS",
    "PROPERTY_PRESERVATION_AND_REPAIR_COSTS", "ASSET_RECOVERY_COSTS",
    "MISCELLANEOUS_HOLDING_EXPENSES_AND_CREDITS", "ASSOCIATED_TAXES_FOR_HOLDING_PROPERTY",
    "NET_SALES_PROCEEDS", "CREDIT_ENHANCEMENT_PROCEEDS", "REPURCHASES_MAKE_WHOLE_PROCEEDS",
    "OTHER_FORECLOSURE_PROCEEDS", "NON_INTEREST_BEARING_UPB", "MI_CANCEL_FLAG", "RE_PROCS_FLAG",
    "LOAN_HOLDBACK_INDICATOR", "SERV_IND",
)
FANNIE_SCHEMA = tuple(zip(FANNIE_COLUMNS, (
    "int64",  # 12-digit ids: pyarrow infers integers
    "string", "string", "double", "double", "int64", "int64", "int64", "string",
    "int64",  # 5-digit MSA codes, "00000" included
    "string",  # "0"/"1"/… and "X"
    "string", "int64", "string", "string", "string", "string",
    *("double",) * 10,
    "null", "string", "null",  # MI_CANCEL_FLAG and LOAN_HOLDBACK_INDICATOR are empty in every row
    "string"), strict=True))

TAXI_2016_COLUMNS = ("VendorID", "tpep_pickup_datetime", "tpep_dropoff_datetime", "passenger_count",
                     "trip_distance", "pickup_longitude", "pickup_latitude", "RatecodeID", "store_and_fwd_flag",
                     "dropoff_longitude", "dropoff_latitude", "payment_type", "fare_amount", "extra", "mta_tax",
                     "tip_amount", "tolls_amount", "improvement_surcharge", "total_amount")
TAXI_2016_SCHEMA = tuple(zip(TAXI_2016_COLUMNS, (
    "int64", "timestamp[s]", "timestamp[s]", "int64", "double", "double", "double", "int64", "string",
    "double", "double", "int64", *("double",) * 7), strict=True))
